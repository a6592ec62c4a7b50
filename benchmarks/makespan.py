"""How close plan-then-execute comes to the best schedule it could have had.

The plain critical path (``dag.graph.critical_path``) assumes every step was known at time zero. A streaming
planner emits steps one by one, so a step cannot start before the plan wrote it: the **emission-aware bound**
is the earliest the last step could finish given when each step was emitted, its measured duration and its
dependencies (an infinitely fast scheduler with zero dispatch cost). ``measured / bound`` is then the
overhead of dispatch, transport and bookkeeping alone (1.0 is perfect); ``measured / critical path`` mixes in
how late the plan arrived.

    >>> steps = {1: TimedStep(emitted=0.5, duration=1.0, deps=()), 2: TimedStep(emitted=0.9, duration=1.0, deps=()),
    ...          3: TimedStep(emitted=1.2, duration=0.5, deps=(1, 2))}
    >>> emission_bound(steps, start=0.5)     # 2 ends at 1.9 at best, then 3: 2.4 - 0.5
    1.9
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["TimedStep", "emission_bound"]


@dataclass(frozen=True, slots=True)
class TimedStep:
    emitted: float
    """When the plan emitted the step (absolute time, same clock as ``start``)."""
    duration: float
    deps: tuple[int, ...]


def emission_bound(steps: Mapping[int, TimedStep], *, start: float) -> float:
    """The earliest possible finish of the whole DAG after ``start`` (seconds); dependencies absent from
    ``steps`` (kept from an earlier plan) are taken as done."""
    finish: dict[int, float] = {}

    def earliest_finish(sid: int, path: frozenset[int]) -> float:
        if sid in finish:
            return finish[sid]
        if sid in path:
            raise ValueError(f"the plan has a cycle through step {sid}")
        step = steps[sid]
        ready = max((earliest_finish(d, path | {sid}) for d in step.deps if d in steps), default=start)
        finish[sid] = max(ready, step.emitted) + step.duration
        return finish[sid]

    return round(max((earliest_finish(s, frozenset()) for s in steps), default=start) - start, 9)
