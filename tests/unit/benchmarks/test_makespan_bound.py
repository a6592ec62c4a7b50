"""The emission-aware bound: never above a schedule that respects emission times and dependencies, and equal
to the plain critical path when the whole plan is known at the start."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.makespan import TimedStep, emission_bound
from dag.graph import critical_path
from support.tiers import examples


@st.composite
def _dags(draw) -> dict[int, TimedStep]:
    steps: dict[int, TimedStep] = {}
    for sid in range(1, draw(st.integers(1, 8)) + 1):
        deps = tuple(sorted(draw(st.sets(st.integers(1, sid - 1), max_size=3)))) if sid > 1 else ()
        steps[sid] = TimedStep(emitted=draw(st.floats(0, 5)), duration=draw(st.floats(0.01, 3)), deps=deps)
    return steps


@settings(max_examples=examples(300), deadline=None)
@given(_dags(), st.lists(st.floats(0, 2), min_size=8, max_size=8))
def test_no_valid_schedule_beats_the_bound(steps: dict[int, TimedStep], delays: list[float]) -> None:
    # any real run: each step starts some delay after it is both emitted and unblocked
    finish: dict[int, float] = {}
    for sid, step in steps.items():
        ready = max([finish[d] for d in step.deps] + [step.emitted])
        finish[sid] = ready + delays[sid - 1] + step.duration
    assert emission_bound(steps, start=0.0) <= max(finish.values()) + 1e-9


@settings(max_examples=examples(200), deadline=None)
@given(_dags())
def test_known_upfront_the_bound_is_the_critical_path(steps: dict[int, TimedStep]) -> None:
    upfront = {sid: TimedStep(0.0, s.duration, s.deps) for sid, s in steps.items()}
    length, _ = critical_path({sid: list(s.deps) for sid, s in steps.items()},
                              {sid: s.duration for sid, s in steps.items()})
    assert abs(emission_bound(upfront, start=0.0) - length) < 1e-6
