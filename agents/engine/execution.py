"""Plan-and-execute for one plan version: feeds streamed steps to the pure scheduler, dispatches every ready
step the moment its dependencies are done — before the plan has finished streaming — and records what each
step returns.

The ``dag.Scheduler`` is the one source of truth for each step's status and attempt; this module keeps the
facts the scheduler does not model (timings, error kinds, fetched outputs) and derives the checkpoint's step
records from both (``step_records``). Driven by completions (``asyncio.wait(FIRST_COMPLETED)``), never by
polling. Every task it starts is awaited, and every failure becomes a recorded step failure. ``run`` returns
how the execution ended (``agents.engine.stops``) instead of raising.

One phase a module: taking the streamed plan's items in is ``agents.engine.plan_intake``'s, deciding which
ready steps start and starting them ``agents.engine.step_dispatch``'s (the two bases of ``PlanExecution``);
what happens when a step returns, and the runner's decisions on steps, are here. Which reasoning steps a
figure is read through: ``agents.engine.hops``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents.engine.gates import has_side_effects
from agents.engine.hops import number_slots
from agents.engine.plan_feed import PlanFeed
from agents.engine.runtime import ExecutorLost, Runtime
from agents.engine.sink import TaskSink, record_spend
from agents.engine.step_dispatch import StepDispatch
from agents.engine.step_records import StepFacts, checkpoint_delta, derive_record, derive_records, restore
from agents.engine.step_run import Running, await_outcome, preview
from agents.engine.stops import AllTerminal, AwaitingConfirmation, ExecutionResult, Limits, Stopped
from agents.engine.task_state import StepState, TaskState
from agents.errors import BudgetExceeded
from agents.events import StepFailedPayload, StepFinishedPayload
from agents.llm.base import Spend
from agents.roles.messages import PlanCompleted, PlanFailed, PlanItem, ReplanContext, StepOutcome
from dag.scheduler import Scheduler
from dag.scheduler import StepState as SchedState
from planning.models import PlanStep
from planning.policy import ReflectionContext
from planning.rejected import remember_rejection
from planning.text_limits import MAX_TEXT_CHARS, cap_text

# Re-exported: ``Limits`` (agents.engine.stops) and ``number_slots`` (agents.engine.hops) were once defined
# here, and callers may still import them from here.
__all__ = ["Limits", "PlanExecution", "number_slots"]

_EXECUTOR_LOSS_REDISPATCHES = 2
_REDISPATCH_PAUSE_S = 0.5
"""The pause before a lost step is sent again, tripled each time (0.5 s, then 1.5 s): time for Ray to restart
an executor, short beside a step's bound."""


class PlanExecution(StepDispatch):
    def __init__(self, state: TaskState, runtime: Runtime, sink: TaskSink, limits: Limits, *,
                 clock: Callable[[], float], kept: dict[int, tuple[PlanStep, Any]] | None = None,
                 replan: ReplanContext | None = None, stream: AsyncIterator[PlanItem] | None = None) -> None:
        self._st = state
        self._rt = runtime
        self._sink = sink
        self._limits = limits
        self._clock = clock
        self._kept = kept or {}
        self._sched = Scheduler()
        self._index: tuple[list[PlanStep], dict[int, PlanStep]] | None = None
        self._facts: dict[int, StepFacts] = {}
        self.values: dict[int, Any] = {}
        """Fetched outputs of completed steps (on Ray the scheduler holds their ObjectRefs)."""
        self._running: dict[asyncio.Future[Any], Running] = {}
        self._finished: list[asyncio.Future[Any]] = []
        self._wake = asyncio.Event()
        self._plan_broken = False
        # The stored state's plan steps: a checkpoint delta carries the ones after these.
        self._plan_written = len(state.plan_steps)
        self._plan_iter: AsyncIterator[PlanItem] | None = None
        self._feed: PlanFeed[PlanItem] | None = None
        self._stopped: Stopped | None = None
        self.awaiting_confirmation: set[int] = set()
        self.started_early = False
        """The plan call started before this execution (speculatively, beside the router)."""
        if state.plan_complete:
            self._rebuild_from_state()
        else:
            self._forget_partial_plan()
            # ``stream``: a plan that started before this execution (the speculative plan, buffered while the
            # router decided); otherwise the planner is asked now.
            self.started_early = stream is not None
            plan = stream if stream is not None else runtime.plan(
                state.task_id, state.task, replan, state.history, limits.budget.for_call(state.usage))
            self._plan_iter = plan.__aiter__()

    # ------------------------------------------------------------------ the derived checkpoint
    def step_records(self) -> dict[int, StepState]:
        """Each step's record for the checkpoint and the result: status and attempt from the scheduler."""
        return derive_records(self._sched, self._steps, self._facts)

    def checkpoint(self) -> TaskState:
        """The task state with its step records derived now (call right before writing it)."""
        self._st.steps = self.step_records()
        return self._st

    # ------------------------------------------------------------------ setup
    def _rebuild_from_state(self) -> None:
        """Resume: the plan is known; completed steps with a stored output are not run again."""
        self._sched, self._facts, self.values = restore(self._st.plan_steps, self._st.steps,
                                                        self._sink.outputs(self._st.plan_version))

    def _forget_partial_plan(self) -> None:
        """Resumed mid-stream: the plan is asked for again; a repeated step that completed is kept, as on a
        replan."""
        if not self._st.plan_steps:
            return
        stored = self._sink.outputs(self._st.plan_version)
        done = {s.step_id: (s, stored[s.step_id]) for s in self._st.plan_steps
                if self._st.steps.get(s.step_id, StepState()).status == "completed" and s.step_id in stored}
        self._kept = {**done, **self._kept}
        self._st.plan_steps, self._st.steps = [], {}
        self._plan_written = 0

    # ------------------------------------------------------------------ main loop
    async def run(self) -> ExecutionResult:
        """Until every step is terminal, the only work left waits for a human, or a cap stops the task."""
        try:
            if self._plan_iter is not None and self._feed is None:
                self._feed = PlanFeed(self._plan_iter, self._wake.set,
                                      is_last=lambda item: isinstance(item, PlanCompleted | PlanFailed))
            while self._stopped is None:
                self._dispatch_ready()
                if (not self._running and self._feed is None) or self._stopped is not None:
                    break
                # Woken by the done-callbacks of what finished, not asyncio.wait over every running step:
                # that re-registered a callback on each of them per wake-up, O(steps in flight) each time.
                while not self._finished and not (self._feed is not None and self._feed.pending):
                    self._wake.clear()
                    await self._wake.wait()
                if self._feed is not None and self._feed.pending:
                    self._take_plan_items(self._feed)
                done, self._finished = self._finished, []
                for fut in done:
                    if fut in self._running:  # not dropped meanwhile by a restart or a retry
                        self._on_step_done(fut)
        except BudgetExceeded as exc:
            self._stopped = Stopped(exc.cap, str(exc))
        except BaseException:
            await self.cancel_all()
            raise
        if self._stopped is not None:
            await self.cancel_all()
            return self._stopped
        if self.awaiting_confirmation:
            return AwaitingConfirmation(tuple(sorted(self.awaiting_confirmation)))
        return AllTerminal()

    async def cancel_all(self) -> None:
        for fut, run in list(self._running.items()):
            run.handle.cancel()
            fut.cancel()
        self._running.clear()
        if self._feed is not None:
            feed, self._feed = self._feed, None
            await feed.close()
        elif self._plan_iter is not None and hasattr(self._plan_iter, "aclose"):
            try:
                await self._plan_iter.aclose()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - closing a broken stream must not mask the real error
                pass

    def stop_running(self) -> list[tuple[int, int, float | None]]:
        """The task was cancelled (``cancel_all`` stopped the calls): each step still running is marked
        cancelled in the scheduler; their ``(step_id, attempt, started_at)``."""
        stopped = [(sid, self._sched.attempt(sid), self._facts[sid].started_at)
                   for sid in self._sched.running()]
        for sid, _, _ in stopped:
            self._sched.cancel(sid)
        return stopped

    def _charge(self, role: str, spend: Spend) -> None:
        record_spend(self._st, self._sink, role, spend, self._limits.budget.cost(spend))
        self._limits.budget.check(self._st.usage.total)
        self._limits.budget.check_priced(spend)

    # ------------------------------------------------------------------ a step returned
    def _on_step_done(self, fut: asyncio.Future[Any]) -> None:
        run = self._running.pop(fut)
        value = None
        try:
            outcome, value = fut.result()
        except ExecutorLost as exc:
            if run.redispatches < _EXECUTOR_LOSS_REDISPATCHES:
                self._redispatch(run, exc)
                return
            now = self._clock()
            error = f"the executor running step {run.step_id} died {run.redispatches + 1} times: {exc}"
            outcome = StepOutcome(step_id=run.step_id, attempt=run.attempt, ok=False, started_at=now,
                                  finished_at=now, error_kind="executor_died", error=error)
        self._charge("executor", outcome.spend)
        if outcome.error is not None and len(outcome.error) > MAX_TEXT_CHARS:
            outcome = dataclasses.replace(outcome, error=cap_text(outcome.error))
        still_running = self._sched.state(run.step_id) is SchedState.RUNNING
        if not still_running or self._sched.attempt(run.step_id) != run.attempt:
            return  # a stale attempt (its step was reset by a retry); its result is dropped
        if outcome.ok:
            self._complete(run.step_id, run.attempt, outcome, value, run.handle.output_ref)
        else:
            self._record_failure(run.step_id, run.attempt, outcome)

    def _redispatch(self, run: Running, exc: ExecutorLost) -> None:
        """The same attempt, on another executor (or the lost one, once Ray restarted it): not a step
        failure (no retry budget is spent), but the log says it happened and where. The higher dispatch
        number lets its write tool take the lost call's claim."""
        run.redispatches += 1
        lost_on = getattr(run.handle, "executor", "") or "the executor"
        run.request = dataclasses.replace(run.request, dispatch=run.request.dispatch + 1)
        self._sink.emit(StepFailedPayload(
            step_id=run.step_id, attempt=run.attempt, error_kind="executor_died", will_retry=True,
            error=f"{lost_on} died while running step {run.step_id} ({exc}); sending it again",
            finished_at=self._clock(), plan_version=self._st.plan_version))
        pause_s = _REDISPATCH_PAUSE_S * 3 ** (run.redispatches - 1)
        fut = asyncio.ensure_future(self._send_again(run, pause_s))
        self._running[fut] = run
        fut.add_done_callback(self._on_finished)

    async def _send_again(self, run: Running, pause_s: float) -> tuple[StepOutcome, Any]:
        # The lost executor is often one Ray is restarting (a lone executor, a wedged one replaced): sent
        # again at once, a step met the same restarting actor three times within a second and failed with
        # it. Cancelled with the others (a retry, a restart, the task's end), the pause never dispatches.
        await asyncio.sleep(pause_s)
        run.handle = self._rt.dispatch(run.request, self._inputs(run.request))
        self._emit_started(run.step_id, run.attempt, run.request.step, run.handle)
        return await await_outcome(run, self._rt, self._clock)

    def _complete(self, sid: int, attempt: int, outcome: StepOutcome, value: Any, ref: Any) -> None:
        """Record a finished step — its output, its event and its checkpoint delta in one commit — before any
        dependent is dispatched, so ``step_finished`` of a step precedes ``step_started`` of its dependents.
        Dependents get the value itself when it came inline, else the output's reference (no second copy).
        A text output of a reasoning step (a model's reply) over the one text limit is cut to it, and the cut
        text is what every dependent, prompt and record gets; a tool's output has its own bound
        (``ToolPolicy.max_output_tokens``)."""
        step = self._steps[sid]
        inline = outcome.output_inline
        if step.tool_name is None and isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            value = cap_text(value)
            inline = True
        self._sched.complete(sid, value if inline else ref)
        self._st.consecutive_errors = 0
        if self._st.rejected_calls and has_side_effects(self._rt.tool_spec(step.tool_name)):
            self._st.rejected_calls = []  # the write may be what makes a rejected input valid now
        self.values[sid] = value
        self._sink.put_output(self._st.plan_version, sid, attempt, value)
        self._facts[sid] = StepFacts(started_at=outcome.started_at, finished_at=outcome.finished_at,
                                     tool_attempts=outcome.tool_attempts, from_journal=outcome.from_journal)
        record = derive_record(self._sched, self._steps, self._facts, sid)
        delta = checkpoint_delta(self._st, {sid: record}, self._plan_written)
        self._plan_written = len(self._st.plan_steps)
        self._sink.emit(StepFinishedPayload(
            step_id=sid, attempt=attempt, output_preview=preview(value), started_at=outcome.started_at,
            finished_at=outcome.finished_at, plan_version=self._st.plan_version, executor=outcome.executor,
            node_id=outcome.node_id, speculative=outcome.speculative), delta=delta)

    def _record_failure(self, step_id: int, attempt: int, outcome: StepOutcome) -> None:
        error_kind = outcome.error_kind or "permanent"
        error = outcome.error or "failed"
        self._sched.fail(step_id, error)
        step = self._steps[step_id]
        if outcome.error_kind == "argument" and step.tool_name is not None:
            self._st.rejected_calls = remember_rejection(self._st.rejected_calls, step, outcome.arguments,
                                                         outcome.error or "invalid arguments")
        self._facts[step_id] = StepFacts(error_kind=error_kind, error=error, started_at=outcome.started_at,
                                         finished_at=outcome.finished_at)
        self._sink.emit(StepFailedPayload(
            step_id=step_id, attempt=attempt, error_kind=error_kind, error=error,
            started_at=outcome.started_at, finished_at=outcome.finished_at, executor=outcome.executor,
            node_id=outcome.node_id, plan_version=self._st.plan_version), self.checkpoint())
        self._plan_written = len(self._st.plan_steps)
        if self._stopped is not None:
            return
        if outcome.error_kind == "max_cost_usd":
            # A model call the money budget refused stops the task: any other call would be refused the
            # same way.
            self._stopped = Stopped("max_cost_usd", outcome.error or "")
        else:
            # A refusal counts too: a task whose calls keep being refused stops like one whose calls keep
            # failing.
            self._stopped = self._limits.failures.after_failure(self._st, step, outcome)

    # ------------------------------------------------------------------ decisions applied by the runner
    def with_graph(self, context: ReflectionContext) -> ReflectionContext:
        """The policy's input with the step graph as the scheduler holds it, so that every retry the policy
        decides is one ``retry`` can make."""
        ids = self._sched.step_ids()
        return dataclasses.replace(context, step_states={sid: self._sched.state(sid) for sid in ids},
                                   step_deps={sid: self._sched.dependencies(sid) for sid in ids})

    def retry(self, step_id: int) -> None:
        """Reset ``step_id`` and its dependents (the reflector's retry_step)."""
        was_running = set(self._sched.retry(step_id))
        for fut, run in list(self._running.items()):
            if run.step_id in was_running:
                run.handle.cancel()
                fut.cancel()
                del self._running[fut]
        for sid in self._steps:
            if self._sched.state(sid) is SchedState.PENDING:
                self.values.pop(sid, None)
        # An approval was for the call as it was then; a reset step (changed, or fed new inputs) asks again.
        self._st.confirmed = [c for c in self._st.confirmed
                              if c not in self._steps or self._sched.state(c) is not SchedState.PENDING]

    def fail_unconfirmed(self, step_id: int, reason: str) -> None:
        """A human refused a step that needed confirmation."""
        self.awaiting_confirmation.discard(step_id)
        attempt = self._sched.start(step_id)
        now = self._clock()
        outcome = StepOutcome(step_id=step_id, attempt=attempt, ok=False, started_at=now, finished_at=now,
                              error_kind="permission", error=reason)
        self._record_failure(step_id, attempt, outcome)
