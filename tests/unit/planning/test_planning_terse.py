"""The terse plan form: round trip with the wire Plan (property), streaming, form detection, every error."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning import parse_plan
from planning.errors import LLMOutputError
from planning.models import Plan, PlanStep
from planning.stream import StreamingPlanParser
from planning.terse import TerseEncodingError, TersePlanParser, parse_terse, render_terse
from prompts import count_tokens
from support.tiers import examples

# Text without "_" can never spell a wire reference by accident; "$", "{", "}", digits, quotes, "#" and a
# newline are in, because they are what the escaping and the line splitting must get right.
_TEXT = st.text(alphabet="ab Z9$0{}.\"'\\#é\n(),=", max_size=12)
_KEYS = st.one_of(st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True), st.sampled_from(["max-results", "a b", "1x"]))
_TOOLS = st.sampled_from(["lookup", "calculator", "web.search", "get-weather", "doc_search"])


def _path() -> st.SearchStrategy[str]:
    segment = st.one_of(st.from_regex(r"[a-z][a-z0-9_]{0,4}", fullmatch=True), st.integers(0, 9).map(str))
    return st.lists(segment, max_size=2).map(lambda p: "".join("." + s for s in p))


@st.composite
def _ref(draw: st.DrawFn, ids: list[int]) -> tuple[int, str]:
    return draw(st.sampled_from(ids)), draw(_path())


@st.composite
def _text_with_refs(draw: st.DrawFn, ids: list[int]) -> str:
    parts = draw(st.lists(st.one_of(_TEXT, _ref(ids).map(lambda r: f"{{$step_{r[0]}_result{r[1]}}}")), max_size=4))
    return "".join(parts)


def _values(ids: list[int]) -> st.SearchStrategy:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                        st.floats(allow_nan=False, allow_infinity=False), _text_with_refs(ids),
                        _ref(ids).map(lambda r: f"$step_{r[0]}_result{r[1]}"))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_TEXT, inner, max_size=3)), max_leaves=6)


@st.composite
def wire_plans(draw: st.DrawFn) -> Plan:
    ids = sorted(draw(st.sets(st.integers(1, 40), min_size=1, max_size=7)))
    steps = []
    for sid in ids:
        tool = draw(st.one_of(st.none(), _TOOLS))
        tool_input = draw(st.dictionaries(_KEYS, _values(ids), max_size=3))
        if tool is None:
            description = draw(_text_with_refs(ids))
        else:
            description = draw(st.one_of(_TEXT.map(lambda t: " ".join(t.split())), st.just("")))
        step = PlanStep(step_id=sid, description=description, tool_name=tool, tool_input=tool_input)
        implied = {int(d) for d in _implied(step)}
        extra = draw(st.sets(st.sampled_from(ids), max_size=2))
        # a parser never returns a step waiting for itself (planning.lenient.normalise_step)
        steps.append(step.model_copy(update={"depends_on": sorted((implied | extra) - {sid})}))
    return Plan(steps=steps)


def _implied(step: PlanStep) -> set[int]:
    from dag.refs import references

    found = set(references(step.tool_input))
    return found | (set(references(step.description)) if step.tool_name is None else set())


def _chunks(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({c % (len(text) + 1) for c in cuts}), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=wire_plans(), cuts=st.lists(st.integers(0, 10**6), max_size=12), fenced=st.booleans())
def test_terse_rendering_streams_back_to_the_same_wire_plan_as_its_json(plan: Plan, cuts: list[int],
                                                                      fenced: bool) -> None:
    terse = render_terse(plan)
    if fenced:
        terse = f"Here is the plan:\n```\n{terse}\n```\nDone."
    parser = StreamingPlanParser()
    streamed: list[PlanStep] = []
    for piece in _chunks(terse, cuts):
        streamed += parser.feed(piece)
    streamed += parser.close()
    assert parser.form == "terse"
    from_json = parse_plan(json.dumps(plan.model_dump()))
    assert Plan(steps=streamed) == from_json == plan


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=wire_plans(), cuts=st.lists(st.integers(0, 10**6), max_size=12), data=st.data())
def test_positional_arguments_stream_back_to_the_same_wire_plan(plan: Plan, cuts: list[int], data) -> None:
    """With each tool's parameter order known, leading arguments go by position and parse to the same plan."""
    params: dict[str, list[str]] = {}
    for step in plan.steps:
        if step.tool_name is not None:
            extra = data.draw(st.lists(st.sampled_from(["zz", "yy"]), unique=True, max_size=2))
            params.setdefault(step.tool_name, [*step.tool_input, *[e for e in extra if e not in step.tool_input]])
    terse = render_terse(plan, params)
    parser = StreamingPlanParser(params)
    streamed: list[PlanStep] = []
    for piece in _chunks(terse, cuts):
        streamed += parser.feed(piece)
    streamed += parser.close()
    assert Plan(steps=streamed) == plan


@pytest.mark.parametrize(("line", "says"), [
    ('1. lookup("Rome", "population", 3)', "takes 2 argument"),
    ('1. lookup("Rome", entity="Paris")', "given by position and by name"),
    ('1. other("Rome")', "name each argument of other"),
])
def test_positional_arguments_that_do_not_fit_the_tool_are_explained(line: str, says: str) -> None:
    with pytest.raises(LLMOutputError, match=says):
        StreamingPlanParser({"lookup": ["entity", "attribute"]}).feed(line + "\n")


def test_each_step_is_emitted_when_its_line_closes() -> None:
    parser = StreamingPlanParser()
    assert parser.feed("Plan:\n1. lookup(entity=") == []
    assert parser.form == "terse"
    assert [s.step_id for s in parser.feed('"Paris")\n2. lookup(entity="Rome")')] == [1]
    assert [s.step_id for s in parser.feed("\n")] == [2]
    assert [s.depends_on for s in parser.feed('3. calculator(expression="$1 - $2")') + parser.close()] == [[1, 2]]


def test_json_and_terse_are_told_apart_by_their_first_plan_line() -> None:
    json_plan = 'Steps (numbered 1. to 2.):\n```json\n{"steps": [{"step_id": 1, "tool_name": "a"}]}\n```'
    assert [s.tool_name for s in parse_plan(json_plan).steps] == ["a"]
    prose_first = "1. First I look things up.\n2. Then I add.\n1. lookup(q=[1, 2])\n"
    assert parse_plan(prose_first).steps[0].tool_input == {"q": [1, 2]}
    assert parse_plan('[{"step_id": 4}]').steps[0].step_id == 4


def test_think_steps_references_and_descriptions() -> None:
    plan = parse_terse('1. think("compare $1.pop and {$2}.5, pay $$3")  # ignored\n'
                       "2. lookup(city=$1, n=-2.5e3, flags=[true, None], q='it\\'s') after $7, $3  # the city")
    think, call = plan.steps
    assert (think.tool_name, think.depends_on) == (None, [2])  # its own $1 is refused by validation, not waited for
    assert think.description == "compare {$step_1_result.pop} and {$step_2_result}.5, pay $3"
    assert call.tool_input == {"city": "$step_1_result", "n": -2500.0, "flags": [True, None], "q": "it's"}
    assert (call.description, call.depends_on) == ("the city", [1, 3, 7])
    assert parse_terse("3. noop()").steps[0].description == "noop"
    assert parse_terse("3. noop()  #").steps[0].description == ""


@pytest.mark.parametrize("line, message", [
    ("1. lookup entity=1", "expected '(' after lookup"),
    ("1. lookup(entity=Paris)", "'Paris' is not a value; quote text"),
    ('1. lookup(entity="Paris"', "the call is never closed"),
    ('1. lookup(entity="Paris)', "this text is never closed"),
    ('1. lookup("Paris")', "name each argument of lookup"),
    ('1. think(q="x")', "think takes the question as one quoted text"),
    ('1. think("a", "b")', "think takes the question as one quoted text"),
    ("1. lookup(a=1, a=2)", "argument 'a' is given twice"),
    ("1. lookup(a=1) then more", "unexpected text after the call"),
    ("1. lookup(a=$x)", "a reference is $ followed by a step number"),
    ("1. lookup(a=1) after 2", "'after' lists the steps to wait for"),
    ("1. lookup(a=1) after $", "'after' takes step numbers"),
    ("0. lookup(a=1)", "step_id: Input should be greater than or equal to 1"),
    ('1. lookup(a="\\q")', "invalid escape sequence"),
    ("1. lookup(a=[1 2])", "expected ',' or ']' in the list"),
    ("1. lookup(a={b: 1})", "expected a quoted key in the object"),
    ('1. lookup(a={"b" 1})', "expected ':' after the key"),
    ('1. lookup(a={"b": 1 "c": 2})', "expected ',' or '}' in the object"),
    ("1. lookup(a=1 b=2)", "expected ',' or ')' after the argument"),
    ("1. lookup(a=1, 2)", "a positional argument cannot follow a named one"),
    ("1. lookup(a=-)", "expected a value"),
    ("1. (a=1)", "expected a tool name"),
    ("1. lookup(a=" + "[" * 30 + "]" * 30 + ")", "values nest too deeply"),
    ('1. lookup(a=1)\n- lookup(a=2)', "is a call without a step number"),
    ('1. lookup(a=1)\nStep 3: calc(x=1)', "is a call without a step number"),
])
def test_every_malformed_line_gets_a_message_for_the_repair_round(line: str, message: str) -> None:
    with pytest.raises(LLMOutputError) as err:
        parse_terse(line)
    assert message in str(err.value)
    assert "Plan line" in str(err.value) and "tool(param=value, ...)" in str(err.value)


def test_stream_edges() -> None:
    with pytest.raises(LLMOutputError, match="Your plan has no steps"):
        TersePlanParser().close()
    parser = TersePlanParser()
    parser.feed("1. a()\n")
    assert parser.close() == [] and parser.close() == []
    with pytest.raises(LLMOutputError, match="already closed"):
        parser.feed("2. b()")
    # A line that never starts like "1. name(" does not make the reply terse: the generic message answers it.
    with pytest.raises(LLMOutputError, match="no numbered step lines"):
        parse_plan("1. lookup entity=1")
    with pytest.raises(LLMOutputError, match="Plan line 2 .*expected '\\(' after lookup"):
        parse_plan("1. lookup(a=1)\n2. lookup entity=1\n")
    undecided = StreamingPlanParser()
    assert undecided.feed("Let me think") == [] and undecided.form is None
    with pytest.raises(LLMOutputError, match='no "steps" array and no numbered step lines'):
        undecided.close()


def test_tools_the_terse_form_cannot_name_are_refused_when_rendering() -> None:
    with pytest.raises(TerseEncodingError, match="'think' is reserved"):
        render_terse(Plan(steps=[PlanStep(step_id=1, tool_name="think")]))
    with pytest.raises(TerseEncodingError, match="rename the tool"):
        render_terse(Plan(steps=[PlanStep(step_id=1, tool_name="my tool")]))


def test_terse_is_far_shorter_than_json_for_a_fan_out_and_sum() -> None:
    cities = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon"]
    steps = [PlanStep(step_id=i + 1, description=f"population of {c}", tool_name="lookup",
                      tool_input={"entity": c, "attribute": "population_millions"}) for i, c in enumerate(cities)]
    steps.append(PlanStep(step_id=7, description="sum", tool_name="calculator", depends_on=list(range(1, 7)),
                          tool_input={"expression": " + ".join(f"{{$step_{i}_result}}" for i in range(1, 7))}))
    plan = Plan(steps=steps)
    wire = json.dumps({"steps": [s.model_dump() for s in plan.steps]})
    terse = render_terse(plan.model_copy(update={"steps": [s.model_copy(update={"description": ""}) for s in steps]}))
    assert parse_terse(terse).steps[6].depends_on == list(range(1, 7))
    assert count_tokens(terse) * 2 < count_tokens(wire)
