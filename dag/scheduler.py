"""The pure, synchronous scheduler state machine for one plan DAG (no Ray, no asyncio, no clock).

The Supervisor feeds it steps as the plan streams in, starts what ``ready()`` returns, and reports each
attempt's outcome. It enforces the rules the runtime relies on: a step starts only when all its dependencies
completed, once per attempt; failures skip everything downstream; a retry resets everything downstream and
says which running attempts to cancel; results of stale attempts are rejected.

Example:
    >>> s = Scheduler()
    >>> s.add_step(2, depends_on=[1])          # a forward reference: step 1 is not known yet
    >>> s.add_step(1)
    >>> s.seal()
    >>> s.ready()
    [1]
    >>> s.start(1)
    1
    >>> s.complete(1, output={"city": "Rome"})
    >>> s.ready(), s.start(2)
    ([2], 1)
    >>> s.fail(2, "tool timed out")
    >>> s.is_done(), s.state(2)
    (True, <StepState.FAILED: 'failed'>)
"""

from __future__ import annotations

import enum
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dag.errors import (
    CycleError,
    DagError,
    DuplicateStepError,
    InvalidTransitionError,
    NotReadyError,
    SchedulerSealedError,
    SelfDependencyError,
    SnapshotError,
    StaleAttemptError,
    UnknownDependencyError,
    UnknownStepError,
)

__all__ = ["Scheduler", "StepState"]

_SNAPSHOT_FORMAT = 1


class StepState(enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


# A step in one of these states will never produce an output, so its pending dependents can never run.
_DEAD = frozenset({StepState.FAILED, StepState.SKIPPED, StepState.CANCELLED})

_HINTS = {
    StepState.PENDING: "it has not started; start() it when ready() lists it",
    StepState.RUNNING: "wait for its complete() or fail(), or cancel() it",
    StepState.COMPLETED: "it already finished; retry() it to run it again",
    StepState.FAILED: "it already finished; retry() it to run it again",
    StepState.SKIPPED: "a dependency did not complete; retry() the failed dependency",
    StepState.CANCELLED: "it was cancelled; retry() it to run it again",
}


@dataclass(slots=True)
class _Step:
    # Mutable on purpose: the scheduler is the single owner and updates records in place on every event.
    deps: frozenset[int]
    state: StepState = StepState.PENDING
    attempt: int = 0
    output: Any = None
    error: str | None = None
    unmet: int = 0
    """How many dependencies are not COMPLETED (unknown ones included): ready() is ``unmet == 0``."""


class Scheduler:
    """Step states of one plan; every transition is a method, every query is pure. See the module doc."""

    def __init__(self) -> None:
        self._steps: dict[int, _Step] = {}
        self._dependents: dict[int, set[int]] = {}  # keyed by any referenced id, known or not (yet)
        self._ready: set[int] = set()
        self._counts: Counter[StepState] = Counter()
        self._sealed = False

    # ------------------------------------------------------------------------------------------ building
    def add_step(self, step_id: int, depends_on: Iterable[int] = ()) -> None:
        """Add a PENDING step (SKIPPED at once if a dependency already failed, was skipped or cancelled)."""
        deps = frozenset(depends_on)
        self._check_new(step_id, deps)
        self._insert(step_id, deps)
        if any(d in self._steps and self._steps[d].state in _DEAD for d in deps):
            self._set_state(step_id, StepState.SKIPPED)
            self._propagate_skip([step_id])

    def preload(self, step_id: int, depends_on: Iterable[int], output: Any, attempt: int = 0) -> None:
        """Add a step that already COMPLETED with ``output`` (a kept step of a replan, or a checkpoint);
        ``attempt`` is how often it ran before."""
        deps = frozenset(depends_on)
        self._check_new(step_id, deps)
        self._insert(step_id, deps)
        self._steps[step_id].output = output
        self._steps[step_id].attempt = attempt
        self._set_state(step_id, StepState.COMPLETED)

    def seal(self) -> None:
        """Declare the plan complete; every dependency must name a step that was added."""
        missing = {sid: sorted(d for d in rec.deps if d not in self._steps) for sid, rec in self._steps.items()}
        offenders = sorted(sid for sid, ids in missing.items() if ids)
        if offenders:
            raise UnknownDependencyError(offenders[0], tuple(missing[offenders[0]]))
        self._sealed = True

    def _check_new(self, step_id: int, deps: frozenset[int]) -> None:
        if self._sealed:
            raise SchedulerSealedError(step_id)
        if step_id in self._steps:
            raise DuplicateStepError(step_id)
        if step_id in deps:
            raise SelfDependencyError(step_id)
        cycle = self._cycle_through(step_id, deps)
        if cycle is not None:
            raise CycleError(cycle)

    def _cycle_through(self, step_id: int, deps: frozenset[int]) -> tuple[int, ...] | None:
        """The shortest cycle the new edges ``deps → step_id`` would close, in dependency order."""
        if not self._dependents.get(step_id):  # nothing depends on the new step yet: no cycle possible
            return None
        parent: dict[int, int] = {step_id: step_id}
        queue = deque([step_id])
        while queue:
            node = queue.popleft()
            if node in deps:
                path = [node]
                while path[-1] != step_id:
                    path.append(parent[path[-1]])
                return tuple(reversed(path))
            for nxt in sorted(self._dependents.get(node, ())):
                if nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
        return None

    def _insert(self, step_id: int, deps: frozenset[int]) -> None:
        unmet = sum(1 for d in deps if d not in self._steps or self._steps[d].state is not StepState.COMPLETED)
        self._steps[step_id] = _Step(deps=deps, unmet=unmet)
        self._counts[StepState.PENDING] += 1
        for d in deps:
            self._dependents.setdefault(d, set()).add(step_id)
        self._dependents.setdefault(step_id, set())
        if unmet == 0:
            self._ready.add(step_id)

    # ---------------------------------------------------------------------------------------- transitions
    def start(self, step_id: int) -> int:
        """PENDING and ready → RUNNING. Returns the attempt number (1 for the first run, +1 per retry)."""
        rec = self._get(step_id)
        if rec.state is not StepState.PENDING:
            raise InvalidTransitionError(step_id, "start", rec.state.value, _HINTS[rec.state])
        if rec.unmet:
            raise NotReadyError(step_id, tuple(d for d in rec.deps if not self._is_completed(d)))
        rec.attempt += 1
        self._set_state(step_id, StepState.RUNNING)
        return rec.attempt

    def complete(self, step_id: int, output: Any = None, attempt: int | None = None) -> None:
        """RUNNING → COMPLETED. With ``attempt``, a result of an older attempt raises StaleAttemptError."""
        rec = self._check_running(step_id, "complete", attempt)
        rec.output, rec.error = output, None
        self._set_state(step_id, StepState.COMPLETED)

    def fail(self, step_id: int, error: str, attempt: int | None = None) -> None:
        """RUNNING → FAILED; every pending step downstream becomes SKIPPED."""
        rec = self._check_running(step_id, "fail", attempt)
        rec.output, rec.error = None, error
        self._set_state(step_id, StepState.FAILED)
        self._propagate_skip([step_id])

    def retry(self, step_id: int) -> list[int]:
        """A finished step → PENDING, and every step downstream of it too (outputs cleared).

        Returns the downstream steps that were RUNNING: the caller must cancel those attempts (their late
        results are then stale). A downstream step that still depends on another dead step stays SKIPPED.
        """
        rec = self._get(step_id)
        if rec.state in (StepState.PENDING, StepState.RUNNING):
            hint = "nothing to retry yet" if rec.state is StepState.PENDING else "cancel() it first"
            raise InvalidTransitionError(step_id, "retry", rec.state.value, hint)
        dead = sorted(d for d in rec.deps if d in self._steps and self._steps[d].state in _DEAD)
        if dead:
            dep = self._steps[dead[0]]
            raise InvalidTransitionError(step_id, "retry", rec.state.value,
                                         f"its dependency step {dead[0]} is {dep.state.value}; "
                                         f"retry step {dead[0]} instead")
        was_running = []
        for sid in self._downstream_in_order(step_id):
            node = self._steps[sid]
            if node.state is StepState.RUNNING:
                was_running.append(sid)
            node.output, node.error = None, None
            blocked = any(d in self._steps and self._steps[d].state in _DEAD for d in node.deps)
            self._set_state(sid, StepState.SKIPPED if blocked else StepState.PENDING)
        return sorted(was_running)

    def cancel(self, step_id: int) -> bool:
        """PENDING/RUNNING → CANCELLED (pending steps downstream become SKIPPED). True if it was running."""
        rec = self._get(step_id)
        if rec.state not in (StepState.PENDING, StepState.RUNNING):
            raise InvalidTransitionError(step_id, "cancel", rec.state.value, _HINTS[rec.state])
        was_running = rec.state is StepState.RUNNING
        self._set_state(step_id, StepState.CANCELLED)
        self._propagate_skip([step_id])
        return was_running

    def cancel_all(self) -> list[int]:
        """Cancel every pending and running step; returns the ids that were RUNNING (to stop them)."""
        was_running = self.running()
        for sid, rec in sorted(self._steps.items()):
            if rec.state in (StepState.PENDING, StepState.RUNNING):
                self._set_state(sid, StepState.CANCELLED)
        return was_running

    # ------------------------------------------------------------------------------------------- queries
    def ready(self) -> list[int]:
        """PENDING steps whose dependencies all COMPLETED, by id. Does not change anything."""
        return sorted(self._ready)

    def state(self, step_id: int) -> StepState:
        return self._get(step_id).state

    def attempt(self, step_id: int) -> int:
        """How many times the step was started (0: never)."""
        return self._get(step_id).attempt

    def output(self, step_id: int) -> Any:
        rec = self._get(step_id)
        if rec.state is not StepState.COMPLETED:
            raise InvalidTransitionError(step_id, "read the output of", rec.state.value,
                                         "only completed steps have an output")
        return rec.output

    def outputs(self) -> dict[int, Any]:
        """Outputs of the completed steps."""
        return {sid: rec.output for sid, rec in self._steps.items() if rec.state is StepState.COMPLETED}

    def error(self, step_id: int) -> str | None:
        """The error a FAILED step was failed with, else None."""
        return self._get(step_id).error

    def running(self) -> list[int]:
        return sorted(sid for sid, rec in self._steps.items() if rec.state is StepState.RUNNING)

    def step_ids(self) -> list[int]:
        return sorted(self._steps)

    def dependencies(self, step_id: int) -> frozenset[int]:
        return self._get(step_id).deps

    def dependents(self, step_id: int) -> frozenset[int]:
        """Steps that depend directly on ``step_id``."""
        self._get(step_id)
        return frozenset(self._dependents.get(step_id, ()))

    @property
    def is_sealed(self) -> bool:
        return self._sealed

    def is_done(self) -> bool:
        """Sealed and nothing PENDING or RUNNING."""
        return self._sealed and not self._counts[StepState.PENDING] and not self._counts[StepState.RUNNING]

    def counts(self) -> dict[StepState, int]:
        return {state: self._counts[state] for state in StepState}

    def __contains__(self, step_id: object) -> bool:
        return step_id in self._steps

    def __len__(self) -> int:
        return len(self._steps)

    # ---------------------------------------------------------------------------------------- checkpoints
    def snapshot(self) -> dict[str, Any]:
        """A JSON-serialisable dict (if the outputs are), for ``Scheduler.restore``."""
        return {"format": _SNAPSHOT_FORMAT, "sealed": self._sealed, "steps": [
            {"step_id": sid, "depends_on": sorted(rec.deps), "state": rec.state.value, "attempt": rec.attempt,
             "output": rec.output, "error": rec.error}
            for sid, rec in sorted(self._steps.items())]}

    @classmethod
    def restore(cls, snapshot: Mapping[str, Any]) -> Scheduler:
        """Rebuild a scheduler from ``snapshot()``; raises SnapshotError for anything else."""
        try:
            if snapshot.get("format") != _SNAPSHOT_FORMAT:
                raise SnapshotError(f"unknown format {snapshot.get('format')!r} (expected {_SNAPSHOT_FORMAT})")
            entries = [(int(e["step_id"]), frozenset(int(d) for d in e["depends_on"]), StepState(e["state"]),
                        int(e["attempt"]), e.get("output"), e.get("error")) for e in snapshot["steps"]]
            sched = cls()
            for sid, deps, *_ in entries:
                sched._check_new(sid, deps)
                sched._insert(sid, deps)
            for sid, _, state, attempt, output, error in entries:
                rec = sched._steps[sid]
                rec.attempt, rec.output, rec.error = attempt, output, error
                sched._set_state(sid, state)
            sched._propagate_skip([sid for sid, rec in sched._steps.items() if rec.state in _DEAD])
            if snapshot["sealed"]:
                sched.seal()
        except SnapshotError:
            raise
        except (DagError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SnapshotError(str(exc) or type(exc).__name__) from exc
        return sched

    # ------------------------------------------------------------------------------------------ internals
    def _get(self, step_id: int) -> _Step:
        try:
            return self._steps[step_id]
        except KeyError:
            raise UnknownStepError(step_id) from None

    def _is_completed(self, step_id: int) -> bool:
        rec = self._steps.get(step_id)
        return rec is not None and rec.state is StepState.COMPLETED

    def _check_running(self, step_id: int, action: str, attempt: int | None) -> _Step:
        rec = self._get(step_id)
        if attempt is not None and (rec.state is not StepState.RUNNING or attempt != rec.attempt):
            raise StaleAttemptError(step_id, attempt, rec.attempt, rec.state.value)
        if rec.state is not StepState.RUNNING:
            raise InvalidTransitionError(step_id, action, rec.state.value, _HINTS[rec.state])
        return rec

    def _set_state(self, step_id: int, new: StepState) -> None:
        """The only place a state changes: keeps counts, dependents' unmet counters and the ready set exact."""
        rec = self._steps[step_id]
        old = rec.state
        if old is new:
            return
        if old is StepState.COMPLETED:
            for d in self._dependents[step_id]:
                self._steps[d].unmet += 1
                self._ready.discard(d)
        self._counts[old] -= 1
        self._counts[new] += 1
        rec.state = new
        if new is StepState.COMPLETED:
            for d in self._dependents[step_id]:
                dep = self._steps[d]
                dep.unmet -= 1
                if dep.unmet == 0 and dep.state is StepState.PENDING:
                    self._ready.add(d)
        if new is StepState.PENDING and rec.unmet == 0:
            self._ready.add(step_id)
        else:
            self._ready.discard(step_id)

    def _propagate_skip(self, dead: Iterable[int]) -> None:
        """Keep the invariant "a PENDING step has no dead dependency" (else is_done() could never hold)."""
        queue = deque(dead)
        while queue:
            for d in self._dependents.get(queue.popleft(), ()):
                if self._steps[d].state is StepState.PENDING:
                    self._set_state(d, StepState.SKIPPED)
                    queue.append(d)

    def _downstream_in_order(self, step_id: int) -> list[int]:
        """``step_id`` and its transitive dependents, dependencies before dependents."""
        closure = {step_id}
        queue = deque([step_id])
        while queue:
            for d in self._dependents[queue.popleft()]:
                if d not in closure:
                    closure.add(d)
                    queue.append(d)
        indegree = {sid: sum(1 for d in self._steps[sid].deps if d in closure) for sid in closure}
        order, frontier = [], deque(sorted(sid for sid, n in indegree.items() if n == 0))
        while frontier:
            sid = frontier.popleft()
            order.append(sid)
            for d in sorted(self._dependents[sid]):
                indegree[d] -= 1
                if indegree[d] == 0:
                    frontier.append(d)
        return order
