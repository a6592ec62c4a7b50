"""Plan-and-execute for one plan version: feeds streamed steps to the pure scheduler and dispatches every
ready step the moment its dependencies are done — before the plan has finished streaming.

Driven by completions (``asyncio.wait(FIRST_COMPLETED)``), never by polling. Every task it starts is
awaited, and every failure becomes a recorded step failure.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agents.engine.runtime import ExecutorLost, Runtime, StepHandle
from agents.engine.sink import TaskSink
from agents.engine.task_state import StepState, TaskState
from agents.events import PlanStepPayload, StepFailedPayload, StepFinishedPayload, StepStartedPayload
from agents.llm.base import Usage
from agents.roles.messages import (
    PlanCompleted,
    PlanFailed,
    PlanItem,
    PlanRestarted,
    ReplanContext,
    StepEmitted,
    StepOutcome,
    StepRequest,
)
from agents.tools import ToolSpec
from dag.errors import DagError
from dag.scheduler import Scheduler
from dag.scheduler import StepState as SchedState
from planning.models import Plan, PlanStep

__all__ = ["ExecutionHooks", "PlanExecution", "PlanFailure", "needs_confirmation"]

_EXECUTOR_LOSS_REDISPATCHES = 2
_PREVIEW_CHARS = 200


class ExecutionHooks(Protocol):
    """What the execution needs from the task runner (budgets, caps, the clock)."""

    def charge(self, role: str, usage: Usage, records: tuple[dict[str, Any], ...]) -> None: ...

    def check_budget(self) -> None: ...

    def on_step_failure(self, step: PlanStep, outcome: StepOutcome) -> None: ...

    def on_step_success(self) -> None: ...

    def now(self) -> float: ...

    def checkpoint(self) -> TaskState: ...


class PlanFailure(Exception):
    """The planner could not produce a valid plan (after its repair round)."""

    def __init__(self, failed: PlanFailed) -> None:
        super().__init__(failed.error)
        self.failed = failed


@dataclass(slots=True)
class _Running:
    step_id: int
    attempt: int
    request: StepRequest
    handle: StepHandle
    redispatches: int = 0


def needs_confirmation(spec: ToolSpec | None, plan_version: int, confirm_replanned_writes: bool = True) -> bool:
    """Whether a step of this tool waits for a human's approval before it runs: a ``requires_confirmation``
    tool always; any write/admin tool in a plan made after the planner saw tool output (every replan: tool
    output is untrusted and may be an injected instruction), unless the deployment opted out."""
    if spec is None:
        return False
    return spec.requires_confirmation or (confirm_replanned_writes and plan_version > 1 and spec.permission != "read")


def _same_step(a: PlanStep, b: PlanStep) -> bool:
    return (a.tool_name, json.dumps(a.tool_input, sort_keys=True, default=str), sorted(a.depends_on)) == \
        (b.tool_name, json.dumps(b.tool_input, sort_keys=True, default=str), sorted(b.depends_on))


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + "…"


class PlanExecution:
    def __init__(self, state: TaskState, runtime: Runtime, sink: TaskSink, hooks: ExecutionHooks, *,
                 step_timeout_s: float, kept: dict[int, tuple[PlanStep, Any]] | None = None,
                 replan: ReplanContext | None = None, clock: Callable[[], float],
                 confirm_replanned_writes: bool = True) -> None:
        self._st, self._rt, self._sink, self._hooks = state, runtime, sink, hooks
        self._confirm_replanned_writes = confirm_replanned_writes
        self._timeout = step_timeout_s
        self._kept = kept or {}
        self._clock = clock
        self._sched = Scheduler()
        self._steps: dict[int, PlanStep] = {}
        self.values: dict[int, Any] = {}
        self._running: dict[asyncio.Future[Any], _Running] = {}
        self._persisting: set[asyncio.Future[None]] = set()
        self._plan_iter: AsyncIterator[PlanItem] | None = None
        self._plan_next: asyncio.Future[PlanItem] | None = None
        self._plan_broken = False
        self.awaiting_confirmation: set[int] = set()
        if state.plan_complete:
            self._rebuild_from_state()
        else:
            self._plan_iter = runtime.plan(state.task_id, state.task, replan).__aiter__()

    # ------------------------------------------------------------------ setup
    def _rebuild_from_state(self) -> None:
        """Resume: the plan is known; completed steps with a stored output are not run again."""
        stored = self._sink.outputs(self._st.plan_version)
        refused: list[int] = []
        for step in self._st.plan_steps:
            self._steps[step.step_id] = step
            record = self._st.steps.setdefault(step.step_id, StepState())
            if record.status == "completed" and step.step_id in stored:
                self._sched.preload(step.step_id, step.depends_on, stored[step.step_id])
                self.values[step.step_id] = stored[step.step_id]
            else:
                self._sched.add_step(step.step_id, step.depends_on)
                if record.status == "failed" and record.error_kind == "permission":
                    refused.append(step.step_id)  # a human said no: continuing must not ask again
                else:
                    record.status = "pending"
        self._sched.seal()
        for sid in refused:
            self._sched.start(sid)
            self._sched.fail(sid, self._st.steps[sid].error or "refused")
        for sid, record in self._st.steps.items():
            if sid in self._steps and self._sched.state(sid) is SchedState.SKIPPED:
                record.status = "skipped"

    @property
    def plan(self) -> Plan:
        return Plan(steps=[self._steps[i] for i in sorted(self._steps)])

    def state_of(self, step_id: int) -> SchedState:
        return self._sched.state(step_id)

    # ------------------------------------------------------------------ main loop
    async def run(self) -> None:
        """Until every step is terminal, or the only work left waits for a human's confirmation."""
        try:
            if self._plan_iter is not None and self._plan_next is None:
                self._plan_next = asyncio.ensure_future(self._plan_iter.__anext__())
            while True:
                self._dispatch_ready()
                waitables: set[asyncio.Future[Any]] = set(self._running)
                if self._plan_next is not None:
                    waitables.add(self._plan_next)
                if not waitables:
                    break
                done, _ = await asyncio.wait(waitables, return_when=asyncio.FIRST_COMPLETED)
                for fut in done:
                    if fut is self._plan_next:
                        self._on_plan_item(fut)
                    elif fut in self._running:  # not dropped meanwhile by a restart of the plan in `done`
                        self._on_step_done(fut)
            if self._persisting:
                await asyncio.gather(*self._persisting)
        except BaseException:
            await self.cancel_all()
            raise

    async def cancel_all(self) -> None:
        for fut, run in list(self._running.items()):
            run.handle.cancel()
            fut.cancel()
        self._running.clear()
        if self._plan_next is not None:
            self._plan_next.cancel()
            self._plan_next = None
        if self._plan_iter is not None and hasattr(self._plan_iter, "aclose"):
            try:
                await self._plan_iter.aclose()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - closing a broken stream must not mask the real error
                pass
        for fut in self._persisting:
            fut.cancel()

    # ------------------------------------------------------------------ plan stream
    def _on_plan_item(self, fut: asyncio.Future[PlanItem]) -> None:
        self._plan_next = None
        try:
            item = fut.result()
        except StopAsyncIteration:
            raise PlanFailure(PlanFailed("the planner stopped without finishing its plan", "invalid_llm_output",
                                         Usage())) from None
        match item:
            case StepEmitted(step=step):
                self._add_step(step)
            case PlanRestarted():
                self._restart()
            case PlanCompleted(plan=_, usage=usage, records=records):
                self._hooks.charge("planner", usage, records)
                self._sched.seal()
                self._st.plan_complete = True
                self._plan_iter = None  # exhausted: a later run() (retry_step) must not read it again
                return
            case PlanFailed(usage=usage, records=records):
                self._hooks.charge("planner", usage, records)
                raise PlanFailure(item)
        self._plan_next = asyncio.ensure_future(self._plan_iter.__anext__())  # type: ignore[union-attr]

    def _add_step(self, step: PlanStep) -> None:
        sid = step.step_id
        self._register_secrets(step)
        self._steps[sid] = step
        self._st.plan_steps.append(step)
        kept = self._kept.get(sid)
        try:
            if kept is not None and _same_step(kept[0], step) and all(
                    self._sched_has_completed(d) for d in step.depends_on):
                self._sched.preload(sid, step.depends_on, kept[1])
                self.values[sid] = kept[1]
                self._st.steps[sid] = StepState(status="completed")
                self._sink.put_output(self._st.plan_version, sid, 0, kept[1])
            else:
                self._sched.add_step(sid, step.depends_on)
                self._st.steps[sid] = StepState()
        except DagError:
            # A cycle or duplicate the planner will report itself (and restart or fail): stop dispatching.
            self._plan_broken = True
        self._sink.emit(PlanStepPayload(step=step, plan_version=self._st.plan_version))

    def _register_secrets(self, step: PlanStep) -> None:
        """Values of the tool's ``secret_params`` are redacted from everything written after this point —
        before the step's own event, so the plan in the log, checkpoints, LLM records and traces never hold them."""
        spec = self._rt.tool_spec(step.tool_name)
        if spec is None or not isinstance(step.tool_input, dict):
            return
        for name in spec.secret_params:
            value = step.tool_input.get(name)
            if isinstance(value, str) and not value.startswith("$step_"):
                self._sink.add_secret(value)

    def _sched_has_completed(self, step_id: int) -> bool:
        return step_id in self._steps and self._sched.state(step_id) is SchedState.COMPLETED

    def _restart(self) -> None:
        """The planner is repairing its plan: forget the broken one (running steps are cancelled, and so are
        pending writes of their outputs: they would land in the repaired plan's state under the same ids)."""
        for fut, run in list(self._running.items()):
            run.handle.cancel()
            fut.cancel()
        self._running.clear()
        for task in self._persisting:
            task.cancel()
        self._persisting.clear()
        self._sched = Scheduler()
        self._steps.clear()
        self.values.clear()
        self._st.plan_steps = []
        self._st.steps = {}
        self._plan_broken = False

    # ------------------------------------------------------------------ dispatch
    def _dispatch_ready(self) -> None:
        if self._plan_broken:
            return
        for sid in self._sched.ready():
            step = self._steps[sid]
            spec = self._rt.tool_spec(step.tool_name)
            if needs_confirmation(spec, self._st.plan_version, self._confirm_replanned_writes) \
                    and sid not in self._st.confirmed:
                if sid in self._st.modifications:
                    # A human approves the exact call; a model does not get to rewrite it afterwards.
                    self.fail_unconfirmed(sid, (
                        f"the reviewer's change ({self._st.modifications[sid]!r}) was not applied: tool "
                        f"{step.tool_name!r} needs a human's confirmation, and a model never rewrites such a call "
                        "after the plan; replan with the exact call instead"))
                    continue
                self.awaiting_confirmation.add(sid)
                continue
            # Any step may call the LLM (a reasoning step, the reviewer's change, an argument repair); and at a
            # cap the task cannot reach its reflector anyway, so nothing more is dispatched.
            self._hooks.check_budget()
            attempt = self._sched.start(sid)
            request = StepRequest(
                task_id=self._st.task_id, task=self._st.task, plan_version=self._st.plan_version, step=step,
                attempt=attempt, timeout_s=self._timeout,
                modification=self._st.modifications.get(sid), confirmed=sid in self._st.confirmed)
            handle = self._dispatch(request)
            self._launch(_Running(sid, attempt, request, handle))
            now = self._hooks.now()
            if self._st.first_dispatch_at is None:
                self._st.first_dispatch_at = now
            record = self._st.steps.setdefault(sid, StepState())
            record.status, record.attempts, record.started_at, record.finished_at = "running", attempt, now, None
            record.error = record.error_kind = None
            self._sink.emit(StepStartedPayload(step_id=sid, attempt=attempt, tool_name=step.tool_name,
                                               plan_version=self._st.plan_version,
                                               executor=getattr(handle, "executor", ""),
                                               node_id=getattr(handle, "node_id", "")))

    def _dispatch(self, request: StepRequest) -> StepHandle:
        inputs = {d: self._sched.output(d) for d in request.step.depends_on}
        return self._rt.dispatch(request, inputs)

    def _launch(self, run: _Running) -> None:
        fut = asyncio.ensure_future(self._await_outcome(run))
        self._running[fut] = run

    async def _await_outcome(self, run: _Running) -> StepOutcome:
        # The executor enforces the step timeout itself; this outer bound also covers a wedged executor.
        try:
            return await asyncio.wait_for(run.handle.outcome(), timeout=run.request.timeout_s + 10.0)
        except TimeoutError:
            run.handle.cancel()
            now = self._clock()
            return StepOutcome(step_id=run.step_id, attempt=run.attempt, ok=False, started_at=now, finished_at=now,
                               error_kind="timeout",
                               error=f"step {run.step_id} did not answer within {run.request.timeout_s:g}s")

    def _on_step_done(self, fut: asyncio.Future[Any]) -> None:
        run = self._running.pop(fut)
        try:
            outcome: StepOutcome = fut.result()
        except ExecutorLost as exc:
            if run.redispatches < _EXECUTOR_LOSS_REDISPATCHES:
                run.redispatches += 1
                lost_on = getattr(run.handle, "executor", "")
                run.handle = self._dispatch(run.request)  # same attempt, another executor
                self._launch(run)
                # Not a step failure (no retry budget is spent), but the log says it happened and where.
                now = self._clock()
                self._sink.emit(StepFailedPayload(
                    step_id=run.step_id, attempt=run.attempt, error_kind="executor_died", will_retry=True,
                    error=f"{lost_on or 'the executor'} died while running step {run.step_id} ({exc}); sent to "
                          f"{getattr(run.handle, 'executor', '') or 'another executor'}",
                    finished_at=now, plan_version=self._st.plan_version))
                self._sink.emit(StepStartedPayload(step_id=run.step_id, attempt=run.attempt,
                                                   tool_name=run.request.step.tool_name,
                                                   plan_version=self._st.plan_version,
                                                   executor=getattr(run.handle, "executor", ""),
                                                   node_id=getattr(run.handle, "node_id", "")))
                return
            now = self._clock()
            outcome = StepOutcome(step_id=run.step_id, attempt=run.attempt, ok=False, started_at=now,
                                  finished_at=now, error_kind="executor_died",
                                  error=f"the executor running step {run.step_id} died {run.redispatches + 1} "
                                        f"times: {exc}")
        self._hooks.charge("executor", outcome.usage, outcome.records)
        if self._sched.state(run.step_id) is not SchedState.RUNNING or self._sched.attempt(run.step_id) != run.attempt:
            return  # a stale attempt (its step was reset by a retry); its result is dropped
        if outcome.ok:
            self._sched.complete(run.step_id, run.handle.output_ref)
            self._hooks.on_step_success()
            task = asyncio.ensure_future(self._persist(run, outcome))
            self._persisting.add(task)
            task.add_done_callback(self._persisting.discard)
        else:
            self._record_failure(run, outcome)

    async def _persist(self, run: _Running, outcome: StepOutcome) -> None:
        """Fetch the output (off the dispatch path: dependents already got the reference), store it, and
        only then mark the step completed in the checkpoint."""
        value = await self._rt.fetch(run.handle.output_ref)
        self.values[run.step_id] = value
        self._sink.put_output(self._st.plan_version, run.step_id, run.attempt, value)
        record = self._st.steps[run.step_id]
        record.status, record.started_at, record.finished_at = "completed", outcome.started_at, outcome.finished_at
        record.tool_attempts, record.from_journal = outcome.tool_attempts, outcome.from_journal
        self._sink.emit(StepFinishedPayload(step_id=run.step_id, attempt=run.attempt, output_preview=_preview(value),
                                            started_at=outcome.started_at, finished_at=outcome.finished_at,
                                            plan_version=self._st.plan_version, executor=outcome.executor,
                                            node_id=outcome.node_id), self._hooks.checkpoint())

    def _record_failure(self, run: _Running, outcome: StepOutcome) -> None:
        self._sched.fail(run.step_id, outcome.error or "failed")
        record = self._st.steps[run.step_id]
        record.status, record.error, record.error_kind = "failed", outcome.error, outcome.error_kind
        record.started_at, record.finished_at = outcome.started_at, outcome.finished_at
        for sid, step_record in self._st.steps.items():
            if sid in self._steps and self._sched.state(sid) is SchedState.SKIPPED:
                step_record.status, step_record.error = "skipped", f"skipped: step {run.step_id} failed"
        self._sink.emit(StepFailedPayload(step_id=run.step_id, attempt=run.attempt,
                                          error_kind=outcome.error_kind or "permanent",
                                          error=outcome.error or "failed", started_at=outcome.started_at,
                                          finished_at=outcome.finished_at, plan_version=self._st.plan_version,
                                          executor=outcome.executor, node_id=outcome.node_id),
                        self._hooks.checkpoint())
        self._hooks.on_step_failure(self._steps[run.step_id], outcome)

    # ------------------------------------------------------------------ decisions applied by the runner
    def retry(self, step_id: int) -> None:
        """Reset ``step_id`` and its dependents (the reflector's retry_step)."""
        for sid in self._sched.retry(step_id):
            for fut, run in list(self._running.items()):
                if run.step_id == sid:
                    run.handle.cancel()
                    fut.cancel()
                    del self._running[fut]
        for sid in self._steps:
            if self._sched.state(sid) is SchedState.PENDING:
                self._st.steps[sid].status = "pending"
                self.values.pop(sid, None)
        # An approval was for the call as it was then; a reset step (changed, or fed new inputs) asks again.
        self._st.confirmed = [c for c in self._st.confirmed
                              if c not in self._steps or self._sched.state(c) is not SchedState.PENDING]

    def fail_unconfirmed(self, step_id: int, reason: str) -> None:
        """A human refused a step that needed confirmation."""
        self.awaiting_confirmation.discard(step_id)
        attempt = self._sched.start(step_id)
        now = self._clock()
        self._record_failure(_Running(step_id, attempt, None, None),  # type: ignore[arg-type]
                             StepOutcome(step_id=step_id, attempt=attempt, ok=False, started_at=now,
                                         finished_at=now, error_kind="permission", error=reason))
