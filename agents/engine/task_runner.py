"""The per-task state machine: ROUTE → PLAN/EXECUTE → REFLECT → accept | retry_step | replan | escalate.

Pure of Ray: it talks to the roles through a ``Runtime`` and records through a ``TaskSink``, so the
same code runs in-process in unit tests and inside the Supervisor actor. Every transition is
emitted as a typed event together with a checkpoint; every stop has a ``stopped_reason``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any, assert_never

from agents.config import RuntimeConfig
from agents.engine.execution import PlanExecution, PlanFailure, needs_confirmation
from agents.engine.runtime import Runtime
from agents.engine.sink import TaskSink
from agents.engine.task_state import Escalation, StepState, TaskState
from agents.errors import InvalidLLMOutputError
from agents.events import (
    EscalatedPayload,
    ReflectedPayload,
    ReplannedPayload,
    RoutedPayload,
    StoppedReason,
    TaskFinishedPayload,
    TaskStatus,
)
from agents.llm.base import LLMError, Usage
from agents.results import StepResult, StepTiming, TaskResult, Timings
from agents.roles.messages import ReplanContext, StepOutcome, StepView
from dag.errors import DagError
from dag.refs import compile_value, resolve
from planning.models import Plan, PlanStep
from planning.policy import Accept, Escalate, PolicyLimits, ReflectionContext, Replan, RetryStep, decide

__all__ = ["TaskRunner", "build_result"]

log = logging.getLogger("tetrarch.task")

_QUESTION_ARGS_CHARS = 2000
_APPROVALS = {"approve", "approved", "yes", "y", "ok", "accept", "confirm", "confirmed", "go", "proceed"}


class _Stop(Exception):
    def __init__(self, status: TaskStatus, reason: StoppedReason, *, error: str | None = None,
                 answer: str | None = None, question: str | None = None,
                 escalation: Escalation | None = None) -> None:
        super().__init__(error or reason)
        self.status, self.reason, self.error = status, reason, error
        self.answer, self.question, self.escalation = answer, question, escalation


def _is_approval(text: str) -> bool:
    return text.strip().lower().rstrip(".!") in _APPROVALS


class TaskRunner:
    """Runs one task (or continues it from its checkpoint) to a final ``TaskResult``. Never raises for a
    task that fails: the failure is the result."""

    def __init__(self, state: TaskState, *, config: RuntimeConfig, runtime: Runtime, sink: TaskSink,
                 clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self._cfg, self._rt, self._sink, self._clock = config, runtime, sink, clock
        self._exec: PlanExecution | None = None
        self._values: dict[int, Any] = {}

    # ------------------------------------------------------------------ hooks used by PlanExecution
    def now(self) -> float:
        return self._clock()

    def checkpoint(self) -> TaskState:
        return self.state

    def charge(self, role: str, usage: Usage, records: tuple[dict[str, Any], ...]) -> None:
        if records:
            self._sink.record_llm_calls(records)
        if usage.llm_calls or usage.total_tokens:
            self.state.usage = self.state.usage.add(role, usage)
        self._enforce_budget(strict=True)

    def check_budget(self) -> None:
        self._enforce_budget(strict=False)

    def _enforce_budget(self, *, strict: bool) -> None:
        """strict: the spend already exceeds a cap. not strict: the next call would start at or past it."""
        total = self.state.usage.total
        budget, calls = self._cfg.token_budget, self._cfg.max_llm_calls
        if budget is not None and (total.total_tokens > budget or (not strict and total.total_tokens >= budget)):
            raise _Stop("failed", "token_budget", error=(
                f"the task used {total.total_tokens} tokens, over its token_budget of {budget}; raise "
                "RuntimeConfig.token_budget or split the task"))
        if calls is not None and (total.llm_calls > calls or (not strict and total.llm_calls >= calls)):
            raise _Stop("failed", "max_llm_calls", error=(
                f"the task made {total.llm_calls} LLM calls, over max_llm_calls={calls}; raise "
                "RuntimeConfig.max_llm_calls or split the task"))

    def on_step_success(self) -> None:
        self.state.consecutive_errors = 0

    def on_step_failure(self, step: PlanStep, outcome: StepOutcome) -> None:
        st = self.state
        st.consecutive_errors += 1
        signature = json.dumps([step.tool_name, outcome.arguments if outcome.arguments is not None
                                else step.tool_input, outcome.error_kind], sort_keys=True, default=str)
        st.failure_signatures[signature] = st.failure_signatures.get(signature, 0) + 1
        if st.failure_signatures[signature] >= self._cfg.loop_window:
            raise _Stop("failed", "loop_detected", error=(
                f"step {step.step_id} ({step.tool_name or 'reasoning'}) failed the same way "
                f"{st.failure_signatures[signature]} times with the same arguments: {outcome.error}. "
                "Fix the tool or its input; the task can be resumed afterwards."))
        if st.consecutive_errors >= self._cfg.max_consecutive_errors:
            raise _Stop("failed", "consecutive_errors", error=(
                f"{st.consecutive_errors} step failures in a row (last: step {step.step_id}: {outcome.error}); "
                "check the tools and their inputs"))

    # ------------------------------------------------------------------ the run
    async def run(self) -> TaskResult:
        try:
            await asyncio.wait_for(self._run(), timeout=self._cfg.task_timeout_s)
        except asyncio.TimeoutError:
            self._finish(_Stop("failed", "task_timeout", error=(
                f"the task did not finish within task_timeout_s={self._cfg.task_timeout_s:g}s; its progress is "
                "checkpointed: raise the timeout and call orch.resume(task_id)")))
        except _Stop as stop:
            self._finish(stop)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a task's failure must never take the Supervisor down
            log.exception("task %s crashed", self.state.task_id)
            self._finish(_Stop("failed", "internal_error", error=(
                f"internal error ({type(exc).__name__}: {exc}); the task is checkpointed and can be resumed with "
                "orch.resume(task_id) — please report this bug")))
        finally:
            if self._exec is not None:
                await self._exec.cancel_all()
        return build_result(self.state, self._values)

    async def _run(self) -> None:
        st = self.state
        if st.phase == "route":
            await self._route()
        if st.escalation is not None and st.human_response is not None:
            self._apply_human_response()
        while True:
            if st.phase in ("plan", "execute"):
                await self._plan_and_execute()
                st.phase = "reflect"
            decision = await self._reflect()
            self._apply(decision)

    async def _route(self) -> None:
        st = self.state
        self.check_budget()
        try:
            result = await self._rt.route(st.task_id, st.task)
        except InvalidLLMOutputError as exc:
            self.charge("router", exc.usage or Usage(), exc.records)
            raise _Stop("failed", "invalid_llm_output", error=str(exc)) from exc
        except LLMError as exc:
            raise _Stop("failed", "llm_unavailable", error=f"the router's model call failed: {exc}") from exc
        self.charge("router", result.usage, result.records)
        d = result.value
        st.phase = "plan"
        self._sink.emit(RoutedPayload(route=d.route, confidence=d.confidence, reason=d.reason), st)
        match d.route:
            case "plan":
                st.plan_version = 1
            case "direct":
                raise _Stop("accepted", "direct_answer", answer=d.answer or d.reason)
            case "clarify":
                raise _Stop("clarify", "clarify", question=d.answer or d.reason or "Could you clarify the task?")
            case "refuse":
                raise _Stop("refused", "refused", answer=d.reason or "This request was refused.")
            case _:
                assert_never(d.route)

    async def _plan_and_execute(self, replan: ReplanContext | None = None,
                                kept: dict[int, tuple[PlanStep, Any]] | None = None) -> None:
        st = self.state
        if self._exec is None:
            self._exec = self._new_execution(kept=kept, replan=replan)
        if not st.plan_complete:
            self.check_budget()
        st.phase = "execute"
        try:
            await self._exec.run()
        except PlanFailure as exc:
            raise _Stop("failed", exc.failed.reason, error=exc.failed.error) from exc
        self._values = dict(self._exec.values)
        if self._exec.awaiting_confirmation:
            raise self._confirmation_stop(min(self._exec.awaiting_confirmation))

    def _new_execution(self, *, kept: dict[int, tuple[PlanStep, Any]] | None = None,
                       replan: ReplanContext | None = None) -> PlanExecution:
        """The execution of the current plan, with this task's runtime, sink, clock and config."""
        return PlanExecution(self.state, self._rt, self._sink, self, step_timeout_s=self._cfg.step_timeout_s,
                             kept=kept, replan=replan, clock=self._clock,
                             confirm_replanned_writes=self._cfg.confirm_replanned_writes)

    def _confirmation_stop(self, step_id: int) -> _Stop:
        step = next(s for s in self.state.plan_steps if s.step_id == step_id)
        spec = self._rt.tool_spec(step.tool_name)
        question = (f"Step {step_id} wants to run the {spec.permission} tool "  # type: ignore[union-attr]
                    f"'{step.tool_name}' with {json.dumps(step.tool_input, ensure_ascii=False)}")
        resolved = self._resolved_input(step)
        if resolved is not None and resolved != step.tool_input:
            shown = json.dumps(resolved, ensure_ascii=False, default=str)
            if len(shown) > _QUESTION_ARGS_CHARS:
                shown = f"{shown[:_QUESTION_ARGS_CHARS]}… ({len(shown) - _QUESTION_ARGS_CHARS} more characters)"
            question += f", that is, filled in from earlier steps' output (untrusted): {shown}"
        question += "."
        if not spec.requires_confirmation and needs_confirmation(  # type: ignore[union-attr]
                spec, self.state.plan_version, self._cfg.confirm_replanned_writes):
            question += (" It was planned after the planner had read tool output (a replan), which may carry "
                         "injected instructions, so it needs your confirmation.")
        question += " Reply 'approve' to run it, or anything else to refuse."
        return _Stop("escalated", "needs_confirmation", question=question,
                     escalation=Escalation(kind="confirmation", reason="a tool call needs confirmation",
                                           question=question, step_id=step_id))

    def _resolved_input(self, step: PlanStep) -> Any:
        """The arguments the call will get: ``$step_N_result`` references filled in from the outputs."""
        try:
            return resolve(compile_value(step.tool_input), self._values)
        except DagError:
            return None

    async def _reflect(self):  # -> Decision
        st = self.state
        st.phase = "reflect"
        self.check_budget()
        plan = Plan(steps=list(st.plan_steps))
        views = [StepView(step_id=s.step_id, description=s.description, tool_name=s.tool_name,
                          status=st.steps.get(s.step_id, StepState()).status, output=self._values.get(s.step_id),
                          error=st.steps.get(s.step_id, StepState()).error) for s in plan.steps]
        try:
            result = await self._rt.reflect(st.task_id, st.task, plan, views)
        except InvalidLLMOutputError as exc:
            self.charge("reflector", exc.usage or Usage(), exc.records)
            raise _Stop("failed", "invalid_llm_output", error=str(exc)) from exc
        except LLMError as exc:
            raise _Stop("failed", "llm_unavailable", error=f"the reflector's model call failed: {exc}") from exc
        self.charge("reflector", result.usage, result.records)
        reflection = result.value
        st.reflections.append(reflection)
        limits = PolicyLimits(max_step_retries=self._cfg.max_step_retries,
                              max_replans=self._cfg.max_replans + st.extra_replans,
                              accept_min_score=self._cfg.accept_min_score,
                              accept_min_correctness=self._cfg.accept_min_correctness)
        decision = decide(ReflectionContext(reflection=reflection, step_retries=dict(st.step_retries),
                                            replans=st.replans, limits=limits,
                                            step_ids=frozenset(s.step_id for s in plan.steps)))
        kind = {Accept: "accept", RetryStep: "retry_step", Replan: "replan", Escalate: "escalate"}[type(decision)]
        self._sink.emit(ReflectedPayload(reflection=reflection, decision=kind,
                                         reason=getattr(decision, "reason", "")), st)
        return decision

    def _apply(self, decision) -> None:
        st = self.state
        match decision:
            case Accept(answer=answer):
                raise _Stop("accepted", "accepted", answer=answer or self._fallback_answer())
            case RetryStep(step_id=step_id, modification=modification):
                st.step_retries[step_id] = st.step_retries.get(step_id, 0) + 1
                if modification:
                    st.modifications[step_id] = modification
                assert self._exec is not None
                self._exec.retry(step_id)
                st.phase = "execute"
            case Replan(feedback=feedback):
                self._start_replan(feedback)
            case Escalate(reason=reason, question=question, cause=cause):
                raise _Stop("escalated", "escalated_by_reflector" if cause == "reflector" else cause,
                            question=question, answer=st.reflections[-1].answer if st.reflections else None,
                            escalation=Escalation(kind="reflector" if cause == "reflector" else "caps",
                                                  reason=reason, question=question))
            case _:
                assert_never(decision)

    def _start_replan(self, feedback: str) -> None:
        st = self.state
        previous = Plan(steps=list(st.plan_steps))
        views = tuple(StepView(step_id=s.step_id, description=s.description, tool_name=s.tool_name,
                               status=st.steps.get(s.step_id, StepState()).status,
                               output=self._values.get(s.step_id), error=st.steps.get(s.step_id, StepState()).error)
                      for s in previous.steps)
        kept = {s.step_id: (s, self._values[s.step_id]) for s in previous.steps
                if st.steps.get(s.step_id, StepState()).status == "completed" and s.step_id in self._values}
        st.replans += 1
        st.plan_version += 1
        st.plan_steps, st.steps, st.plan_complete = [], {}, False
        st.step_retries, st.modifications, st.confirmed = {}, {}, []
        st.phase = "plan"
        self._sink.emit(ReplannedPayload(plan_version=st.plan_version, feedback=feedback,
                                         kept_steps=sorted(kept)), st)
        self._exec = self._new_execution(kept=kept, replan=ReplanContext(feedback, previous, views))

    def _apply_human_response(self) -> None:
        """Continue after orch.respond(): approve a pending tool call, accept, or replan with the human's words."""
        st = self.state
        esc, text = st.escalation, st.human_response or ""
        assert esc is not None
        st.escalation, st.human_response = None, None
        st.status = st.stopped_reason = st.question = None
        if esc.kind == "confirmation" and esc.step_id is not None:
            st.phase = "execute"
            if _is_approval(text):
                st.confirmed.append(esc.step_id)
            else:
                self._exec = self._new_execution()
                self._exec.fail_unconfirmed(esc.step_id, f"a human refused this call: {text!r}")
            return
        if _is_approval(text) and st.reflections:
            raise _Stop("accepted", "accepted", answer=st.reflections[-1].answer or self._fallback_answer())
        st.extra_replans += 1
        self._values = self._sink.outputs(st.plan_version)
        self._start_replan(f"A human reviewer says: {text}")

    def _fallback_answer(self) -> str | None:
        """The reflector accepted without writing an answer: use the outputs of the plan's final steps."""
        depended = {d for s in self.state.plan_steps for d in s.depends_on}
        sinks = [s.step_id for s in self.state.plan_steps if s.step_id not in depended and s.step_id in self._values]
        parts = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
                 for v in (self._values[i] for i in sinks)]
        return "\n".join(parts) if parts else None

    def _finish(self, stop: _Stop) -> None:
        st = self.state
        st.status, st.stopped_reason, st.error = stop.status, stop.reason, stop.error
        st.answer, st.question, st.escalation = stop.answer, stop.question, stop.escalation
        st.finished_at = self._clock()
        st.phase = "waiting" if stop.status == "escalated" else "done"
        if stop.escalation is not None:
            self._sink.emit(EscalatedPayload(reason=stop.escalation.reason, question=stop.escalation.question,
                                             kind=stop.escalation.kind, step_id=stop.escalation.step_id))
        self._sink.emit(TaskFinishedPayload(status=stop.status, stopped_reason=stop.reason, answer=stop.answer,
                                            error=stop.error), st)


def build_result(st: TaskState, values: dict[int, Any]) -> TaskResult:
    steps = [StepResult(step_id=s.step_id, description=s.description, tool_name=s.tool_name,
                        tool_input=s.tool_input, status=rec.status, output=values.get(s.step_id), error=rec.error,
                        attempts=rec.attempts, started_at=rec.started_at, finished_at=rec.finished_at)
             for s in st.plan_steps for rec in [st.steps.get(s.step_id, StepState())]]
    end = st.finished_at or time.time()
    timings = Timings(
        wall_s=max(0.0, end - st.submitted_at), submitted_at=st.submitted_at, finished_at=st.finished_at,
        first_dispatch_s=None if st.first_dispatch_at is None else st.first_dispatch_at - st.submitted_at,
        steps={r.step_id: StepTiming(started_at=r.started_at, finished_at=r.finished_at) for r in steps})
    return TaskResult(task_id=st.task_id, status=st.status or "failed", stopped_reason=st.stopped_reason or
                      "internal_error", answer=st.answer, error=st.error, question=st.question,
                      plan=Plan(steps=list(st.plan_steps)) if st.plan_steps else None, steps=steps,
                      reflections=list(st.reflections), usage=st.usage, timings=timings, replans=st.replans)
