"""The dag package's error tree: every error is a ``DagError``, carries its data, and says what to do.

Constructors only format a message (no side effects), and errors pickle with their data intact, so a
scheduler error raised in one process can be reported by another.

Example:
    >>> err = CycleError((1, 2, 3))
    >>> str(err)
    'steps 1 → 2 → 3 → 1 form a dependency cycle; remove one of these dependencies'
    >>> isinstance(err, DagError), err.cycle
    (True, (1, 2, 3))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "CycleError",
    "DagError",
    "DuplicateStepError",
    "InvalidTransitionError",
    "NotReadyError",
    "RefResolutionError",
    "SchedulerSealedError",
    "SelfDependencyError",
    "SnapshotError",
    "StaleAttemptError",
    "UnknownDependencyError",
    "UnknownStepError",
]


def _ids(ids: Iterable[int], limit: int = 20) -> str:
    items = sorted(ids)
    text = ", ".join(str(i) for i in items[:limit])
    return text + (", …" if len(items) > limit else "")


class DagError(Exception):
    """Base of every error raised by ``dag``."""

    def __init__(self, message: str, *args: Any) -> None:
        super().__init__(message)
        # Keep the constructor arguments so pickling (e.g. across a Ray boundary) rebuilds the same error.
        self._init_args: tuple[Any, ...] = (message, *args)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._init_args)


class UnknownStepError(DagError):
    """A query or transition named a step the scheduler does not hold."""

    def __init__(self, step_id: int) -> None:
        super().__init__(f"step {step_id} is not in this plan; add it with add_step() first")
        self._init_args = (step_id,)
        self.step_id = step_id


class DuplicateStepError(DagError):
    def __init__(self, step_id: int) -> None:
        super().__init__(f"step {step_id} was already added; give every step a unique step_id")
        self._init_args = (step_id,)
        self.step_id = step_id


class SelfDependencyError(DagError):
    def __init__(self, step_id: int) -> None:
        super().__init__(f"step {step_id} depends on itself; remove {step_id} from its depends_on")
        self._init_args = (step_id,)
        self.step_id = step_id


class CycleError(DagError):
    """``cycle`` lists the step ids along the dependency edges: each step depends on the one before it,
    and the first depends on the last."""

    def __init__(self, cycle: tuple[int, ...]) -> None:
        cycle = tuple(cycle)
        path = " → ".join(str(i) for i in (*cycle, cycle[0])) if cycle else "?"
        super().__init__(f"steps {path} form a dependency cycle; remove one of these dependencies")
        self._init_args = (cycle,)
        self.cycle = cycle


class SchedulerSealedError(DagError):
    def __init__(self, step_id: int) -> None:
        super().__init__(f"cannot add step {step_id}: the plan is sealed (complete); "
                         "start a new Scheduler for a new plan")
        self._init_args = (step_id,)
        self.step_id = step_id


class UnknownDependencyError(DagError):
    """Raised by ``seal()``: a step depends on steps that were never added."""

    def __init__(self, step_id: int, missing: tuple[int, ...]) -> None:
        missing = tuple(sorted(missing))
        noun = "step" if len(missing) == 1 else "steps"
        it = "it" if len(missing) == 1 else "them"
        super().__init__(f"step {step_id} depends on {noun} {_ids(missing)}, not in the plan; "
                         f"add {it} or remove {it} from depends_on")
        self._init_args = (step_id, missing)
        self.step_id, self.missing = step_id, missing


class NotReadyError(DagError):
    """``start()`` on a pending step whose dependencies are not all completed."""

    def __init__(self, step_id: int, waiting_on: tuple[int, ...]) -> None:
        waiting_on = tuple(sorted(waiting_on))
        super().__init__(f"step {step_id} is not ready: it waits for step(s) {_ids(waiting_on)}; "
                         "only start ids returned by ready()")
        self._init_args = (step_id, waiting_on)
        self.step_id, self.waiting_on = step_id, waiting_on


class InvalidTransitionError(DagError):
    """The step's current state does not allow ``action``; ``state`` is the state's value (e.g. "pending")."""

    def __init__(self, step_id: int, action: str, state: str, hint: str) -> None:
        super().__init__(f"cannot {action} step {step_id}: it is {state}; {hint}")
        self._init_args = (step_id, action, state, hint)
        self.step_id, self.action, self.state = step_id, action, state


class StaleAttemptError(DagError):
    """A result arrived for an attempt that is no longer the running one (retried or cancelled since)."""

    def __init__(self, step_id: int, attempt: int, current: int, state: str) -> None:
        super().__init__(f"attempt {attempt} of step {step_id} is stale (current attempt {current}, {state}); "
                         "drop this result")
        self._init_args = (step_id, attempt, current, state)
        self.step_id, self.attempt, self.current = step_id, attempt, current


class SnapshotError(DagError):
    def __init__(self, problem: str) -> None:
        super().__init__(f"cannot restore the scheduler snapshot: {problem}; "
                         "pass a dict produced by Scheduler.snapshot()")
        self._init_args = (problem,)


class RefResolutionError(DagError):
    """A ``$step_N_result`` reference could not be resolved; ``path`` is the dotted field path, if any."""

    def __init__(self, message: str, step_id: int, path: str = "") -> None:
        super().__init__(message)
        self._init_args = (message, step_id, path)
        self.step_id, self.path = step_id, path
