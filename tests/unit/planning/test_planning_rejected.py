"""``planning.rejected``: a step is matched to a rejected call only when it makes exactly that call with a literal
input; what the engine remembers stays small and never holds one call twice."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planning.models import PlanStep
from planning.rejected import MAX_REJECTED_CALLS, RejectedCall, rejected_problem, rejected_repeat, remember_rejection
from planning.validate import ProblemCode

names = st.sampled_from(["visitors", "lookup", "sql"])
values = st.one_of(st.text(max_size=8), st.integers(), st.floats(allow_nan=False))
inputs = st.dictionaries(st.sampled_from(["site", "city", "q"]), values, max_size=2)
# the machines are shared: generation may be slow there, and speed is not what these tests are about
relaxed = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@relaxed
@given(names, inputs, names, inputs)
def test_only_the_same_tool_with_the_same_input_is_a_repeat(tool_a: str, input_a: dict, tool_b: str,
                                                            input_b: dict) -> None:
    seen = remember_rejection([], PlanStep(step_id=1, tool_name=tool_a, tool_input=input_a), None, "bad input")
    again = PlanStep(step_id=7, tool_name=tool_b, tool_input=input_b)
    same = tool_a == tool_b and RejectedCall(tool_name=tool_a, tool_input=input_a, error="").key() == \
        RejectedCall(tool_name=tool_b, tool_input=input_b, error="").key()
    assert (rejected_repeat(again, seen) is not None) == same


@relaxed
@given(names, st.text(max_size=8))
def test_an_input_from_another_step_is_never_a_repeat(tool: str, text: str) -> None:
    step = PlanStep(step_id=3, tool_name=tool, tool_input={"q": f"{text} {{$step_1_result}}"}, depends_on=[1])
    resolved = {"q": f"{text} 42"}
    seen = remember_rejection([], step, resolved, "bad input")
    assert seen == [RejectedCall(tool_name=tool, tool_input=resolved, error="bad input")]
    assert rejected_repeat(step, seen) is None
    assert rejected_repeat(PlanStep(step_id=4, tool_name=tool), seen) is None or resolved == {}


def test_a_reasoning_step_is_never_a_repeat() -> None:
    seen = [RejectedCall(tool_name="visitors", tool_input={}, error="x")]
    assert rejected_repeat(PlanStep(step_id=2, description="think"), seen) is None


@relaxed
@given(st.lists(st.tuples(names, inputs), max_size=40))
def test_remembered_calls_are_unique_and_bounded(rejections: list[tuple[str, dict]]) -> None:
    seen: list[RejectedCall] = []
    for i, (tool, tool_input) in enumerate(rejections):
        seen = remember_rejection(seen, PlanStep(step_id=i + 1, tool_name=tool, tool_input=tool_input),
                                  tool_input, "bad input")
    keys = [c.key() for c in seen]
    assert len(keys) == len(set(keys)) <= MAX_REJECTED_CALLS
    if rejections:
        tool, tool_input = rejections[-1]
        assert rejected_repeat(PlanStep(step_id=99, tool_name=tool, tool_input=tool_input), seen) is not None


def test_the_problem_quotes_the_tools_error_and_names_the_step() -> None:
    call = RejectedCall(tool_name="visitors", tool_input={"site": "Lyon"}, error="unknown site 'Lyon'")
    problem = rejected_problem(PlanStep(step_id=4, tool_name="visitors", tool_input={"site": "Lyon"}), call)
    assert problem.code is ProblemCode.REJECTED_CALL and problem.step_id == 4
    assert "visitors(site='Lyon')" in problem.message and "unknown site 'Lyon'" in problem.message


def test_the_refusal_survives_pickling_whole() -> None:
    import pickle

    from planning.errors import PlanValidationError
    call = RejectedCall(tool_name="t", tool_input={"a": 1}, error="bad input")
    err = PlanValidationError((rejected_problem(PlanStep(step_id=1, tool_name="t", tool_input={"a": 1}), call),))
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.problems == err.problems
