"""Which ready steps of a plan version start now, and how they start: the steps that became ready together
go out in one batch (``Runtime.dispatch_many``), each with its own handle, timeout and outcome. A write waits
until the streamed plan is whole, a call that needs a human waits for one, and a reasoning step that only
names its search's one hit is answered by code. A base of ``agents.engine.execution.PlanExecution``, which
holds the state named below and records what each started step returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agents.engine.gates import has_side_effects, needs_confirmation
from agents.engine.hops import names_by_code, number_slots, read_through
from agents.engine.plan_intake import PlanIntake
from agents.engine.runtime import StepHandle
from agents.engine.step_records import StepFacts
from agents.engine.step_run import BY_CODE, Running, about, await_outcome
from agents.engine.stops import Limits
from agents.events import StepStartedPayload
from agents.roles.messages import StepOutcome, StepRequest
from dag.scheduler import StepState as SchedState
from planning.models import PlanStep

__all__ = ["StepDispatch"]


class StepDispatch(PlanIntake):
    """The dispatch half of a plan execution (the state is its subclass's; see its ``__init__``)."""

    _limits: Limits
    _clock: Callable[[], float]
    _finished: list[asyncio.Future[Any]]
    _wake: asyncio.Event
    awaiting_confirmation: set[int]

    def _complete(self, sid: int, attempt: int, outcome: StepOutcome, value: Any, ref: Any) -> None:
        raise NotImplementedError

    def fail_unconfirmed(self, step_id: int, reason: str) -> None:
        raise NotImplementedError

    def _dispatch_ready(self) -> None:
        """Start every ready step; the ones that became ready together are sent together (one call per
        executor on Ray), and each still has its own handle, timeout and outcome."""
        if self._plan_broken:
            return
        while self._answer_names_by_code():
            pass  # an answered step may make another one ready
        started: list[tuple[int, StepRequest]] = []
        for sid in self._sched.ready():
            if self._may_start(sid):
                started.append((sid, self._start(sid)))
        if not started:
            return
        handles = self._rt.dispatch_many([(request, self._inputs(request)) for _, request in started])
        now = self._clock()
        if self._st.first_dispatch_at is None:
            self._st.first_dispatch_at = now
        for (sid, request), handle in zip(started, handles, strict=True):
            self._launch(Running(sid, request.attempt, request, handle))
            self._facts[sid] = StepFacts(started_at=now)
            self._emit_started(sid, request.attempt, request.step, handle)

    def _may_start(self, sid: int) -> bool:
        """Whether a ready step runs now (not: a write of a plan still streaming, or a call that waits for a
        human's confirmation)."""
        step = self._steps[sid]
        if step.tool_name is None and self._limits.dispatch.serial_llm and not self._st.plan_complete:
            # At a one-request model server its call would only queue behind the planner's stream, its timeout
            # running meanwhile; and once the plan is whole, a name hop may need no call
            # (_answer_names_by_code).
            return False
        spec = self._rt.tool_spec(step.tool_name)
        if not self._st.plan_complete and has_side_effects(spec):
            # A streamed plan can still be rejected (over max_steps, a cycle, a bad later step) and be
            # replaced: its writes wait until the whole plan is validated, its reads run at once.
            return False
        confirm_writes = self._limits.dispatch.confirm_replanned_writes
        if not needs_confirmation(spec, self._st.plan_version, confirm_writes) or sid in self._st.confirmed:
            return True
        if sid in self._st.modifications:
            # A human approves the exact call; a model does not get to rewrite it afterwards.
            self.fail_unconfirmed(sid, (
                f"the reviewer's change ({self._st.modifications[sid]!r}) was not applied: tool "
                f"{step.tool_name!r} needs a human's confirmation, and a model never rewrites such a call "
                "after the plan; replan with the exact call instead"))
            return False
        self.awaiting_confirmation.add(sid)
        return False

    def _answer_names_by_code(self) -> bool:
        """Complete, without a model call, each ready reasoning step that only names its search's one hit for
        arithmetic (``agents.engine.hops.names_by_code``; the numeric check set only: code then answers in the
        model's place). Only on a one-request server once the plan is whole: the steps that use a reasoning
        step are known only then, and elsewhere the call runs beside the rest at no wait."""
        dispatch = self._limits.dispatch
        if not dispatch.serial_llm or not self._st.plan_complete or "numeric" not in dispatch.checks:
            return False
        answers = names_by_code(self._sched.ready(), self._steps, self.values, self._st.modifications,
                                lambda step: number_slots(self._rt, step))
        for sid, title in answers:
            self._complete_by_code(sid, title)
        return bool(answers)

    def _complete_by_code(self, sid: int, value: Any) -> None:
        attempt = self._sched.start(sid)
        now = self._clock()
        self._sink.emit(StepStartedPayload(step_id=sid, attempt=attempt, tool_name=None,
                                           plan_version=self._st.plan_version, executor=BY_CODE))
        outcome = StepOutcome(step_id=sid, attempt=attempt, ok=True, started_at=now, finished_at=now,
                              output=value, executor=BY_CODE, output_inline=True)
        self._complete(sid, attempt, outcome, value, None)

    def _start(self, sid: int) -> StepRequest:
        """The step's next attempt, started in the scheduler (the caller dispatches it)."""
        step = self._steps[sid]
        # Any step may call the LLM (a reasoning step, the reviewer's change, an argument repair); and at a
        # cap the task cannot reach its reflector anyway, so nothing more is dispatched.
        self._limits.budget.check(self._st.usage.total, before_call=True)
        cost = self._limits.budget.for_call(self._st.usage)
        attempt = self._sched.start(sid)
        through: dict[int, int] = {}
        if self._limits.dispatch.read_through:
            through = read_through(step, self._steps, self._is_completed)
        inputs_about = {dep: about(self._steps[dep])
                        for dep in (*step.depends_on, *through.values()) if dep in self._steps}
        return StepRequest(
            task_id=self._st.task_id, task=self._st.task, plan_version=self._st.plan_version, step=step,
            attempt=attempt, timeout_s=self._limits.dispatch.step_timeout_s,
            modification=self._st.modifications.get(sid), confirmed=sid in self._st.confirmed,
            generation=self._sink.generation, inputs_about=inputs_about, read_through=through, cost=cost)

    def _is_completed(self, sid: int) -> bool:
        return self._sched.state(sid) is SchedState.COMPLETED

    def _emit_started(self, sid: int, attempt: int, step: PlanStep, handle: StepHandle) -> None:
        self._sink.emit(StepStartedPayload(
            step_id=sid, attempt=attempt, tool_name=step.tool_name, plan_version=self._st.plan_version,
            executor=getattr(handle, "executor", ""), node_id=getattr(handle, "node_id", "")))

    def _inputs(self, request: StepRequest) -> dict[int, Any]:
        return {d: self._sched.output(d) for d in (*request.step.depends_on, *request.read_through.values())}

    def _launch(self, run: Running) -> None:
        fut = asyncio.ensure_future(await_outcome(run, self._rt, self._clock))
        self._running[fut] = run
        fut.add_done_callback(self._on_finished)

    def _on_finished(self, fut: asyncio.Future[Any]) -> None:
        # The done-callback of every started step: the loop (``PlanExecution.run``) wakes and takes it.
        self._finished.append(fut)
        self._wake.set()
