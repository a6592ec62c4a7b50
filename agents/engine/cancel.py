"""Cancelling a task (``orch.cancel``): how a run is stopped where it waits, what it records, how a resume
reopens it.

A run's work is its ``_run`` coroutine; ``CancelScope.run`` runs it and ``CancelScope.request`` cancels it
from the Supervisor's loop, so the run stops at its current await: a role's model call, the plan stream, the
wait for its steps. Everything the work started is stopped on the way out (``PlanExecution.cancel_all``: an
async tool's coroutine is cancelled, a thread or a Ray task is told and abandoned without waiting). The run
then records the steps it stopped as cancelled and ends "cancelled" with ``CancelNote`` (who, and in which
phase), so ``reopen`` can put the task back where it stopped; completed steps keep their records and outputs.

    >>> scope = CancelScope()
    >>> scope.request("the API"), scope.request("MCP")   # the second finds it requested already
    (True, False)
    >>> asyncio.run(scope.run(lambda: asyncio.sleep(60)))  # requested before the run started: nothing runs
    'the API'
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from agents.engine.execution import PlanExecution
from agents.engine.sink import TaskSink
from agents.engine.task_state import CancelNote, StepState, TaskState
from agents.engine.task_stop import TaskStop
from agents.events import (AnyEvent, PlanStepPayload, StepFailedPayload, StepFinishedPayload,
                           StepStartedPayload)
from agents.results import CancelOutcome, TaskResult

__all__ = ["CancelScope", "already_over", "cancelled_stop", "from_the_log", "outcome", "reopen",
           "stop_records", "superseded", "within"]

T = TypeVar("T")

MAX_BY_CHARS = 200
"""Who cancelled is a name, not a text: longer ones are cut."""


class CancelScope:
    """One run's cancel switch: ``run`` wraps the run's work, ``request`` comes from the run's loop."""

    def __init__(self) -> None:
        self.by: str | None = None
        """Who asked for the cancel (None: nobody)."""
        self._task: asyncio.Task[Any] | None = None
        self._ended = False

    def request(self, by: str) -> bool:
        """Stop the work where it waits (or, not started yet, before it starts). False when a cancel was
        requested already, or the work is over (the run is writing its own outcome, which stands)."""
        if self._ended or self.by is not None:
            return False
        self.by = by
        if self._task is not None:
            self._task.cancel()
        return True

    def repeat(self) -> None:
        """Cancel the work again: code under it swallowed the first cancellation and went on."""
        if self._task is not None and self.by is not None:
            self._task.cancel()

    async def run(self, work: Callable[[], Awaitable[Any]]) -> str | None:
        """Run ``work()``; who cancelled it when a ``request`` stopped it, else None (what it raised
        propagates)."""
        if self.by is not None:
            self._ended = True
            return self.by
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        try:
            await work()
        except asyncio.CancelledError:
            if self.by is None:
                raise  # stopped from outside (shutdown, a lost lease): not a cancel of the task
        finally:
            self._task, self._ended = None, True
            if self.by is not None and task.cancelling():
                task.uncancel()  # the cancel was ours: the run goes on to record it
        return self.by


async def within(timeout_s: float, work: Awaitable[T]) -> T:
    """``work`` under a deadline (``TimeoutError`` past it), in the calling task: ``asyncio.wait_for`` ran
    it as a task of its own, with a future and a timer, objects every run in flight kept for the cyclic GC."""
    async with asyncio.timeout(timeout_s):
        return await work


def from_the_log(state: TaskState, events: Sequence[AnyEvent]) -> None:
    """What the event log knows of the current plan beyond the checkpoint, for a task cancelled through the
    store (its runner is elsewhere): a checkpoint records the steps streamed and started since its last write
    only with the next write. Adds those steps (a plan still streaming) and marks running the steps started
    and not ended."""
    known = {step.step_id for step in state.plan_steps}
    open_: dict[int, tuple[int, float]] = {}
    for event in events:
        payload = event.payload
        if getattr(payload, "plan_version", None) != state.plan_version:
            continue
        if isinstance(payload, PlanStepPayload) and not state.plan_complete \
                and payload.step.step_id not in known:
            state.plan_steps.append(payload.step)
            known.add(payload.step.step_id)
        elif isinstance(payload, StepStartedPayload):
            open_[payload.step_id] = (payload.attempt, event.ts)
        elif isinstance(payload, StepFinishedPayload) or (isinstance(payload, StepFailedPayload)
                                                           and not payload.will_retry):
            open_.pop(payload.step_id, None)
    for sid, (attempt, started_at) in open_.items():
        record = state.steps.get(sid, StepState())
        if record.status != "completed":
            state.steps[sid] = record.model_copy(update={"status": "running", "attempts": attempt,
                                                         "started_at": started_at, "finished_at": None})


def stop_records(steps: dict[int, StepState]) -> list[tuple[int, int, float | None]]:
    """A checkpoint's running steps (a task cancelled without a live execution: its runner was elsewhere)
    marked cancelled; their ``(step_id, attempt, started_at)``."""
    stopped = sorted((sid, rec.attempts, rec.started_at) for sid, rec in steps.items()
                     if rec.status == "running")
    for sid, _, _ in stopped:
        steps[sid] = steps[sid].model_copy(update={"status": "cancelled"})
    return stopped


def cancelled_stop(state: TaskState, execution: PlanExecution | None, sink: TaskSink, by: str,
                   now: float) -> TaskStop:
    """How a cancelled run ends: the steps it stopped marked cancelled, each with a ``step_failed`` (kind
    "cancelled") so every reader sees it end; who cancelled and where, noted in ``state`` (for ``reopen``)."""
    stopped = execution.stop_running() if execution is not None else stop_records(state.steps)
    for sid, attempt, started_at in stopped:
        sink.emit(StepFailedPayload(step_id=sid, attempt=attempt, error_kind="cancelled",
                                    error=f"cancelled by {by}", started_at=started_at, finished_at=now,
                                    plan_version=state.plan_version))
    state.cancelled = CancelNote(by=by, phase=state.phase, at=now)
    return TaskStop("cancelled", "cancelled", error=(
        f"cancelled by {by}; the completed steps are kept: orch.resume(task_id) continues the task"))


def reopen(state: TaskState) -> bool:
    """Put a cancelled task back in the phase it was cancelled in, its outcome cleared (``orch.resume``);
    False for any other task."""
    note = state.cancelled
    if state.status != "cancelled" or note is None:
        return False
    state.phase = note.phase
    state.cancelled = None
    state.status = state.stopped_reason = state.error = state.answer = state.question = None
    state.finished_at = None
    return True


def already_over(state: TaskState) -> CancelOutcome | None:
    """The outcome of a cancel that finds nothing to stop (the task finished, was cancelled, or waits for a
    human), or None when the task may be running."""
    task_id, status = state.task_id, state.status
    if state.phase == "done" and status == "cancelled":
        by = state.cancelled.by if state.cancelled is not None else "someone"
        return CancelOutcome(task_id=task_id, cancelled=False, status="cancelled", message=(
            f"task {task_id} was already cancelled (by {by}); orch.resume(task_id) continues it"))
    if state.phase == "waiting":
        return CancelOutcome(task_id=task_id, cancelled=False, status=status or "escalated", message=(
            f"task {task_id} is waiting for a human's answer: nothing runs to cancel; answer it with "
            "orch.respond(task_id, text)"))
    if state.phase == "done":
        return CancelOutcome(task_id=task_id, cancelled=False, status=status or "failed", message=(
            f"task {task_id} had already finished ({status}); nothing to cancel"))
    return None


def superseded(task_id: str) -> CancelOutcome:
    """A cancel whose run lost the task to another runner (a resume elsewhere) before it recorded anything."""
    return CancelOutcome(task_id=task_id, cancelled=False, status="running", message=(
        f"task {task_id} was taken over by another runner (a resume) before this cancel was recorded, and runs "
        "on; cancel it again to stop it"))


def outcome(result: TaskResult, requested: bool) -> CancelOutcome:
    """What a cancel did, from the result the run ended with (``requested``: this call asked for the stop)."""
    if result.status == "cancelled" and requested:
        return CancelOutcome(task_id=result.task_id, cancelled=True, status="cancelled", message=(
            f"task {result.task_id} cancelled by {result.cancelled_by}; its completed steps are kept: "
            "orch.resume(task_id) continues it"))
    if result.status == "cancelled":
        return CancelOutcome(task_id=result.task_id, cancelled=False, status="cancelled", message=(
            f"task {result.task_id} was already cancelled (by {result.cancelled_by}); orch.resume(task_id) "
            "continues it"))
    return CancelOutcome(task_id=result.task_id, cancelled=False, status=result.status, message=(
        f"task {result.task_id} had already finished ({result.status}); nothing to cancel"))
