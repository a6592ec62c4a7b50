"""Which cached steps may start early, and which dispatch a speculated call may serve (``planning.speculation``):
properties over random plans and tool facts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from planning.models import PlanStep
from planning.speculation import MAX_SPECULATED, ToolFacts, call_key, may_use, speculable, speculable_steps

TOOLS = ("read", "read2", "write", "unsafe_read", "confirm", "keyed")
FACTS = {"read": ToolFacts(), "read2": ToolFacts(), "write": ToolFacts(read=False, idempotent=False),
         "unsafe_read": ToolFacts(idempotent=False), "confirm": ToolFacts(needs_human=True),
         "keyed": ToolFacts(takes_key=True)}
SAFE = {"read", "read2"}

values = st.one_of(st.integers(-3, 3), st.sampled_from([1.0, 2.0, True, False, "a", "b", "$step_1_result",
                                                        "x {$step_2_result} y"]))
inputs = st.dictionaries(st.sampled_from(["x", "y"]), st.one_of(values, st.lists(values, max_size=2)), max_size=2)


@st.composite
def steps(draw: st.DrawFn) -> list[PlanStep]:
    n = draw(st.integers(1, 6))
    out = []
    for i in range(1, n + 1):
        deps = draw(st.lists(st.integers(1, i - 1), max_size=1, unique=True)) if i > 1 else []
        out.append(PlanStep(step_id=i, tool_name=draw(st.one_of(st.none(), st.sampled_from(TOOLS + ("gone",)))),
                            tool_input=draw(inputs), depends_on=deps))
    return out


def _has_ref(value: object) -> bool:
    if isinstance(value, str):
        return "$step_" in value
    if isinstance(value, dict):
        return any(_has_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_ref(v) for v in value)
    return False


@given(steps())
def test_only_reads_with_known_arguments_are_ever_chosen(plan: list[PlanStep]) -> None:
    chosen = speculable_steps(plan, FACTS.get)
    for step in chosen:
        assert step.tool_name in SAFE  # never a write, a non-idempotent tool, a confirmed or keyed one, or unknown
        assert not step.depends_on and not _has_ref(step.tool_input)
    keys = [call_key(s.tool_name or "", s.tool_input) for s in chosen]
    assert len(keys) == len(set(keys)) and len(chosen) <= MAX_SPECULATED
    # Every safe step with known arguments is chosen (one per distinct call).
    wanted = {call_key(s.tool_name or "", s.tool_input) for s in plan
              if s.tool_name in SAFE and not s.depends_on and not _has_ref(s.tool_input)}
    assert set(keys) == wanted


@given(steps(), steps(), st.integers(1, 3), st.sampled_from([None, "use Rome"]), st.integers(1, 3))
def test_a_speculated_call_serves_only_the_same_call_at_a_first_attempt(cached: list[PlanStep],
                                                                        planned: list[PlanStep], attempt: int,
                                                                        modification: str | None,
                                                                        version: int) -> None:
    started = {call_key(s.tool_name or "", s.tool_input): s for s in speculable_steps(cached, FACTS.get)}
    for step in planned:
        key = may_use(step, attempt=attempt, modification=modification, plan_version=version)
        if key is None or key not in started:
            continue
        source = started[key]
        assert (source.tool_name, source.tool_input) == (step.tool_name, step.tool_input)
        assert call_key(source.tool_name or "", source.tool_input) == call_key(step.tool_name or "", step.tool_input)
        assert attempt == 1 and modification is None and version == 1 and not step.depends_on


def test_canonical_equality_tells_types_apart() -> None:
    assert call_key("t", {"a": 1, "b": 2}) == call_key("t", {"b": 2, "a": 1})
    assert call_key("t", {"a": 1}) != call_key("t", {"a": 1.0})
    assert call_key("t", {"a": 1}) != call_key("t", {"a": True})
    assert call_key("t", {"a": 1}) != call_key("u", {"a": 1})


def test_a_value_json_cannot_write_is_never_speculated() -> None:
    step = PlanStep(step_id=1, tool_name="read", tool_input={"x": float("nan")})
    assert not speculable(step, ToolFacts())
    assert may_use(step, attempt=1, modification=None, plan_version=1) is None
