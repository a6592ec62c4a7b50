"""A looping planner reply (``planning.loops``): the third copy of one call is flagged, with the steps it repeats;
reasoning steps never are, and neither is a second copy (a plan may repeat a call on purpose)."""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from planning.delta import call_key
from planning.loops import LOOP_COPIES, RepeatedCall, repeated_call
from planning.models import PlanStep
from support.tiers import examples


def search(sid: int, query: str = "Rhine", deps: list[int] | None = None) -> PlanStep:
    return PlanStep(step_id=sid, description=f"search {sid}", tool_name="doc_search", tool_input={"query": query},
                    depends_on=deps or [])


def think(sid: int, deps: list[int]) -> PlanStep:
    return PlanStep(step_id=sid, description="What does it say?", depends_on=deps)


def test_the_benchmark_loop_is_flagged_at_the_third_search_with_the_two_it_repeats() -> None:
    reply = [search(1), think(2, [1]), search(3), think(4, [3]), search(5), think(6, [5])]
    flagged = [repeated_call(s, reply[:i]) for i, s in enumerate(reply)]
    assert flagged == [None] * 4 + [RepeatedCall(step_id=5, tool_name="doc_search", repeats=(1, 3)), None]
    assert "steps 1 and 3" in flagged[4].describe() and "before step 5" in flagged[4].describe()


def test_a_different_input_or_dependency_is_another_call() -> None:
    earlier = [search(1), search(2, deps=[1]), search(3, query="Nile")]
    assert repeated_call(search(4), earlier) is None
    assert repeated_call(search(5, deps=[1]), [*earlier, search(4, deps=[1])]) == \
        RepeatedCall(step_id=5, tool_name="doc_search", repeats=(2, 4))


def test_the_flag_pickles_for_ray_and_keeps_its_value() -> None:
    flag = repeated_call(search(3), [search(1), search(2)])
    assert flag is not None and pickle.loads(pickle.dumps(flag)) == flag


# Few tools, inputs and dependencies, so that repeats are common; reasoning steps (None) are among them.
_CALLS = st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 1), st.sampled_from([(), (1,), (1, 2)]))


@st.composite
def _replies(draw) -> list[PlanStep]:
    calls = draw(st.lists(_CALLS, max_size=12))
    return [PlanStep(step_id=i + 3, description=draw(st.sampled_from(["x", "y"])), tool_name=tool,
                     tool_input={} if tool is None else {"x": x}, depends_on=list(deps))
            for i, (tool, x, deps) in enumerate(calls)]


def _same(a: PlanStep, b: PlanStep) -> bool:
    """The oracle, by plain equality (not the JSON key the module uses)."""
    return (a.tool_name, a.tool_input, sorted(a.depends_on)) == (b.tool_name, b.tool_input, sorted(b.depends_on))


@settings(max_examples=examples(300), deadline=None)
@given(_replies())
def test_a_step_is_flagged_iff_two_earlier_steps_make_its_call(reply: list[PlanStep]) -> None:
    for i, step in enumerate(reply):
        same = tuple(s.step_id for s in reply[:i] if _same(s, step))
        flag = repeated_call(step, reply[:i])
        if step.tool_name is None or len(same) < LOOP_COPIES - 1:
            assert flag is None
        else:
            assert flag == RepeatedCall(step_id=step.step_id, tool_name=step.tool_name, repeats=same)


@settings(max_examples=examples(300), deadline=None)
@given(_replies())
def test_passing_only_the_same_call_s_steps_gives_the_same_answer(reply: list[PlanStep]) -> None:
    """What the planner role does to stay O(1) per streamed step."""
    by_call: dict[str, list[PlanStep]] = {}
    for i, step in enumerate(reply):
        assert repeated_call(step, by_call.get(call_key(step), [])) == repeated_call(step, reply[:i])
        by_call.setdefault(call_key(step), []).append(step)


@settings(max_examples=examples(300), deadline=None)
@given(_replies())
def test_the_first_flagged_step_is_the_third_copy_and_never_a_reasoning_step(reply: list[PlanStep]) -> None:
    flagged = [i for i, step in enumerate(reply) if repeated_call(step, reply[:i]) is not None]
    if flagged:
        first = reply[flagged[0]]
        assert first.tool_name is not None
        assert sum(_same(s, first) for s in reply[:flagged[0]]) == LOOP_COPIES - 1
