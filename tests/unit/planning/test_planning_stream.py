from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning import LLMOutputError, PlanStep, StreamingPlanParser, parse_plan
from support.tiers import examples

text_values = st.text(alphabet=st.sampled_from(list('ab {}[]"\\\',:$é\n\t')), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | text_values,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text_values, inner, max_size=3), max_leaves=6)


@st.composite
def plans(draw):
    n = draw(st.integers(1, 8))
    steps = []
    for i in range(1, n + 1):
        steps.append({
            "step_id": i,
            "description": draw(text_values),
            "tool_name": draw(st.sampled_from([None, "search", "calc"])),
            "tool_input": draw(st.dictionaries(text_values, json_values, max_size=3)),
            "depends_on": draw(st.lists(st.integers(1, max(1, i - 1)), max_size=2, unique=True)) if i > 1 else [],
        })
    return steps


def render(steps, style: str, indent) -> str:
    body = json.dumps({"steps": steps}, indent=indent, ensure_ascii=False)
    if style == "bare":
        return json.dumps(steps, indent=indent)
    if style == "fenced":
        return f"Here is the plan {{as asked}}:\n```json\n{body}\n```\nLet me know [if] anything else."
    if style == "needs":  # planner templates with "# needs: first": a list of strings opens the object
        needs = ['the "steps": [1]: search', "a ] } b", "steps", "x {"]
        return json.dumps({"needs": needs, "steps": steps}, indent=indent, ensure_ascii=False)
    if style == "trailing":
        sep = ",\n" if indent else ", "
        return '{"steps": [' + sep.join(json.dumps(s, indent=indent, ensure_ascii=False) for s in steps) + ",]}"
    return body


def chunks(text: str, cuts: list[int]):
    points = sorted({c % (len(text) + 1) for c in cuts})
    last = 0
    for p in points:
        yield text[last:p]
        last = p
    yield text[last:]


@settings(max_examples=examples(300), deadline=None)
@given(plans(), st.sampled_from(["plain", "fenced", "bare", "trailing", "needs"]), st.sampled_from([None, 1, 2]),
       st.lists(st.integers(0, 10_000), max_size=30))
def test_streamed_steps_equal_whole_parse_at_any_chunking(steps, style, indent, cuts):
    text = render(steps, style, indent)
    whole = parse_plan(text).steps
    parser = StreamingPlanParser()
    streamed = []
    for piece in chunks(text, cuts):
        streamed += parser.feed(piece)
    streamed += parser.close()
    assert streamed == whole == [PlanStep.model_validate(s) for s in steps]
    assert parser.steps == streamed


def test_each_step_is_emitted_when_its_object_closes():
    parser = StreamingPlanParser()
    assert parser.feed('{"steps": [{"step_id": 1, "tool_input": {"q": "}"') == []
    assert [s.step_id for s in parser.feed('}}, {"step_id": 2')] == [1]
    assert [s.step_id for s in parser.feed("}")] == [2]
    assert parser.feed("]} trailing prose {") == [] and parser.close() == []


@pytest.mark.parametrize("text, message", [
    ('{"steps": [{"step_id": 1}, {"step_id": 2', 'the "steps" array never closed (after 1 complete steps)'),
    ('{"thoughts": "long', "the JSON object never closed"),
    ("I cannot do that.", 'no "steps" array'),
    ('{"steps": [1, 2]}', "steps.0: every step must be a JSON object"),
    ('{"steps": [{"step_id": 1 "x": 2}]}', "Step number 1 in your plan is not valid JSON"),
    ('{"steps": [{"step_id": 0}]}', "steps.0.step_id: Input should be greater than or equal to 1"),
    ('{"steps": [{"step_id": 1}]]', None),
])
def test_stream_errors(text, message):
    parser = StreamingPlanParser()
    if message is None:
        assert [s.step_id for s in parser.feed(text) + parser.close()] == [1]
        return
    with pytest.raises(LLMOutputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parser.feed(text)
        parser.close()


def test_prose_brackets_before_the_plan_are_skipped():
    text = 'Using [search] and [calc]: {"note": {"steps": 1}, "steps": [{"step_id": 3}]}'
    assert [s.step_id for s in parse_plan(text).steps] == [3]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list('{}[]",:\\ steps1\n`')), max_size=15), max_size=8))
def test_garbage_chunks_raise_only_llm_output_error(pieces):
    parser = StreamingPlanParser()
    try:
        for p in pieces:
            parser.feed(p)
        parser.close()
    except LLMOutputError:
        pass


def test_linear_time_on_fine_chunks():
    steps = [{"step_id": i, "description": "x" * 50, "tool_name": "search", "tool_input": {"q": "y" * 50},
              "depends_on": []} for i in range(1, 401)]
    text = json.dumps({"steps": steps})
    parser = StreamingPlanParser()
    got = 0
    for i in range(0, len(text), 3):
        got += len(parser.feed(text[i:i + 3]))
    assert got + len(parser.close()) == 400
