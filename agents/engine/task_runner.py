"""The per-task state machine: ROUTE → PLAN/EXECUTE → REFLECT → accept | retry_step | replan | escalate.

Pure of Ray: it talks to the roles through a ``Runtime`` and records through a ``TaskSink``, so the
same code runs in-process in unit tests and inside the Supervisor actor. Every transition is
emitted as a typed event together with a checkpoint; every stop has a ``stopped_reason``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar, assert_never

from agents.checks.api import Check
from agents.config import RuntimeConfig
from agents.engine.answer_events import AnswerEvents
from agents.engine.answer_checks import checked_review, recorded_with
from agents.engine.cancel import CancelScope, cancelled_stop, within
from agents.engine.code_replans import replan_before_review
from agents.engine.execution import PlanExecution
from agents.engine.gates import is_approval
from agents.engine.hops import number_slots
from agents.engine.early_work import EarlyContext, EarlyWork, start_early
from agents.engine.memory_link import MemoryLink, cached_plan_stream
from agents.engine.prefetch import PlanPrefetch
from agents.engine.questions import confirmation_question, fallback_answer, repeated_plan_question, with_checked_answer
from agents.engine.result_build import build_result, learnable, review_input, step_views
from agents.engine.runtime import Runtime
from agents.engine.sink import TaskSink, record_spend
from agents.engine.stops import AllTerminal, AwaitingConfirmation, Limits, Stopped
from agents.engine.task_state import Escalation, ReviewAgainNote, StepState, TaskState
from agents.engine.task_stop import TaskStop, output_stop, stop_for_error
from agents.config.prices import CostBudget
from agents.errors import CostBudgetExceeded, InvalidLLMOutputError, InvalidOutputError
from agents.events import EscalatedPayload, ReflectedPayload, ReplannedPayload, RoutedPayload, TaskFinishedPayload
from agents.llm.profile import HOSTED, ModelProfile, Strategy
from agents.llm.base import LLMError, Spend
from agents.results import TaskResult
from agents.roles.messages import ReplanContext, RoleResult, StepView
from agents.store import LeaseLostError
from dag.errors import DagError
from dag.refs import compile_value, resolve
from planning.models import Plan, PlanStep
from planning.policy import (Accept, Decision, Escalate, Replan, RetryStep, ReviewAgain, decide, decision_kind,
                             decision_reason)

__all__ = ["TaskRunner", "build_result"]

T = TypeVar("T")


class TaskRunner:
    """Runs one task (or continues it from its checkpoint) to a final ``TaskResult``. Never raises for a
    task that fails: the failure is the result."""

    def __init__(self, state: TaskState, *, config: RuntimeConfig, runtime: Runtime, sink: TaskSink,
                 clock: Callable[[], float] = time.time, memory: MemoryLink | None = None,
                 checks: Sequence[Check] = (), profile: ModelProfile = HOSTED,
                 limits: Limits | None = None) -> None:
        self.state, self._checks = state, tuple(checks)  # the user's answer checks, run on every accept
        self._cfg, self._rt, self._sink, self._clock = config, runtime, sink, clock
        self._memory = memory
        # One request at a time (a profile without concurrent calls): the planner waits for the router, and a
        # reasoning step for the plan, rather than queue behind each other at the server.
        self._speculate_plan = config.speculative_planning and profile.concurrent_calls
        self._final_figure_look = profile.uses(Strategy.FINAL_FIGURE_LOOK)
        self._limits = limits or Limits.of(config, profile)  # ``limits``: the same, built once for many runs
        if config.prices is not None and not state.usage.total.llm_calls:  # priced: nothing spent is $0
            state.usage = state.usage.model_copy(update={"cost_usd": 0.0})
        self._exec: PlanExecution | None = None
        self._reviewed: tuple[int, str] | None = None
        """The plan version and what the reviewer last read (``_review_input``): not checkpointed, so a resumed
        task reviews again."""
        self._feedback = ""
        """The last replan's feedback, for the question when a replan repeats the plan it was meant to change."""
        self.cancel_scope = CancelScope()
        """How the Supervisor stops this run where it waits (``orch.cancel``; ``agents.engine.cancel``)."""
        self._early = EarlyWork()  # what started at submit beside the router (agents.engine.early_work)

    def _charge(self, role: str, spend: Spend) -> None:
        budget = self._limits.budget
        record_spend(self.state, self._sink, role, spend, budget.cost(spend))
        budget.check(self.state.usage.total)
        budget.check_priced(spend)

    def _cost(self) -> CostBudget | None:  # each model call of the role call is checked where its prompt is
        return self._limits.budget.for_call(self.state.usage)

    async def _ask(self, role: Literal["router", "reflector"],
                   call: Callable[[], Awaitable[RoleResult[T]]]) -> T:
        """One role call: refused at a cap before it starts, its spend booked, its failure a stop."""
        self._limits.budget.check(self.state.usage.total, before_call=True)
        try:
            result = await call()
        except (InvalidLLMOutputError, CostBudgetExceeded) as exc:
            self._charge(role, exc.spend or Spend())
            if isinstance(exc, CostBudgetExceeded):
                raise
            if isinstance(exc, InvalidOutputError):  # a human can still answer it (agents.outputs)
                raise output_stop(exc) from exc
            raise TaskStop("failed", "invalid_llm_output", error=str(exc)) from exc
        except LLMError as exc:
            raise TaskStop("failed", "llm_unavailable", error=f"the {role}'s model call failed: {exc}") from exc
        self._charge(role, result.spend)
        return result.value

    def _snapshot(self) -> TaskState:
        """The state to checkpoint: step records derived from the running plan, when there is one."""
        return self._exec.checkpoint() if self._exec is not None else self.state

    def _outputs(self) -> dict[int, Any]:
        return self._exec.values if self._exec is not None else self._sink.outputs(self.state.plan_version)

    def _records(self) -> dict[int, StepState]:
        return self._exec.step_records() if self._exec is not None else self.state.steps

    # ------------------------------------------------------------------ the run
    async def run(self) -> TaskResult:
        try:
            by = await self.cancel_scope.run(lambda: within(self._cfg.task_timeout_s, self._run()))
            if by is not None:  # ``_run`` itself only ends by raising
                self._finish(cancelled_stop(self.state, self._exec, self._sink, by, self._clock()))
        except (asyncio.CancelledError, LeaseLostError):
            raise  # stopped from outside, or another runner owns the task now: write nothing more
        except Exception as exc:  # noqa: BLE001 - every failure becomes the task's result (task_stop)
            self._finish(stop_for_error(exc, self.state.task_id, self._cfg.task_timeout_s))
            # Its traceback holds this frame (and the runner, its state, its sink): a cycle that kept every
            # finished task's objects for the cyclic GC's slow full pass instead of freeing them here.
            exc.__traceback__ = None
        finally:
            if self._exec is not None:
                await self._exec.cancel_all()
            await self._early.end_reads()
        return build_result(self._snapshot(), self._outputs())

    async def _run(self) -> None:
        st = self.state
        if st.phase == "route":
            await self._route()
        if st.escalation is not None and st.human_response is not None:
            self._apply_human_response()
        while True:
            if st.phase in ("plan", "execute"):
                await self._plan_and_execute()
                await self._early.end_reads()  # a later plan is not served by calls started for the first
                st.phase = "reflect"
                if self._replan_before_review():
                    continue
            decision = await self._reflect()
            self._apply(decision)

    def _replan_before_review(self) -> bool:
        """A replan code starts before any review (``agents.engine.code_replans.replan_before_review``)."""
        st = self.state
        if st.replans >= self._cfg.policy_limits(st.extra_replans).max_replans:
            return False
        found = replan_before_review(st.task, Plan(steps=list(st.plan_steps)), self._records(), self._outputs(),
                                     self._views, lambda step: number_slots(self._rt, step), self._cfg.builtin_checks,
                                     argument_replans=st.argument_replans)
        if found is None:
            return False
        replan, for_arguments = found
        st.argument_replans += for_arguments
        self._start_replan(replan.feedback, plan=replan.plan)
        return True

    async def _route(self) -> None:
        st = self.state
        self._early = start_early(EarlyContext(st, self._cfg, self._rt, self._sink, self._limits, self._memory),
                                  speculate_plan=self._speculate_plan)
        early = self._early
        reuse, cached, hint, prefetch = early.reuse, early.cached, early.hint, early.prefetch
        try:
            d = await self._ask("router", lambda: self._rt.route(st.task_id, st.task, st.history,
                                                                 self._cost()))
        except BaseException:
            await self._early.abandon()
            raise
        st.phase = "plan"
        hit = None
        if reuse is not None and d.route == "plan":
            st.cached_template, st.cache_mode = reuse.template_id, "filled" if cached is not None else "adapt"
            hit = {"template_id": reuse.template_id, "mode": st.cache_mode}
        self._sink.emit(RoutedPayload(route=d.route, confidence=d.confidence, reason=d.reason, plan_cache=hit),
                        self._snapshot())
        if d.route != "plan":
            await self._early.abandon()
        match d.route:
            case "plan":
                st.plan_version = 1
                if cached is not None:
                    self._exec = self._new_execution(stream=cached_plan_stream(cached.plan))
                elif prefetch is not None:
                    self._exec = self._new_execution(stream=prefetch)
                elif hint:  # not speculated: the planner starts now, with the template to adapt
                    self._exec = self._new_execution(stream=self._rt.plan(st.task_id, st.task, None, hint,
                                                                          self._cost()))
            case "direct":
                raise TaskStop("accepted", "direct_answer", answer=d.answer or d.reason)
            case "clarify":
                raise TaskStop("clarify", "clarify", question=d.answer or d.reason or "Could you clarify the task?")
            case "refuse":
                raise TaskStop("refused", "refused", answer=d.reason or "This request was refused.")
            case _:
                assert_never(d.route)

    async def _plan_and_execute(self) -> None:
        st = self.state
        if self._exec is None:
            self._exec = self._new_execution()
        if not st.plan_complete and not self._exec.started_early:
            self._limits.budget.check(st.usage.total, before_call=True)
        st.phase = "execute"
        outcome = await self._exec.run()
        match outcome:
            case AllTerminal():
                return
            case AwaitingConfirmation(step_ids=step_ids):
                raise self._confirmation_stop(step_ids[0])
            case Stopped(reason=reason, error=error):
                raise TaskStop("failed", reason, error=error)
            case _:
                assert_never(outcome)

    def _new_execution(self, *, kept: dict[int, tuple[PlanStep, Any]] | None = None,
                       replan: ReplanContext | None = None, stream: PlanPrefetch | None = None) -> PlanExecution:
        """The execution of the current plan, with this task's runtime, sink, clock and limits."""
        return PlanExecution(self.state, self._early.served(self._rt), self._sink, self._limits, clock=self._clock,
                             kept=kept, replan=replan, stream=stream)

    def _confirmation_stop(self, step_id: int) -> TaskStop:
        step = next(s for s in self.state.plan_steps if s.step_id == step_id)
        question = confirmation_question(step, self._rt.tool_spec(step.tool_name), self._resolved_input(step),
                                         self.state.plan_version, self._cfg.confirm_replanned_writes)
        return TaskStop("escalated", "needs_confirmation", question=question,
                     escalation=Escalation(kind="confirmation", reason="a tool call needs confirmation",
                                           question=question, step_id=step_id))

    def _resolved_input(self, step: PlanStep) -> Any:
        """The arguments the call will get: ``$step_N_result`` references filled in from the outputs."""
        try:
            return resolve(compile_value(step.tool_input), self._outputs())
        except DagError:
            return None

    def _views(self, plan: Plan) -> list[StepView]:
        return step_views(plan, self._records(), self._outputs())

    async def _reflect(self) -> Decision:
        st = self.state
        st.phase = "reflect"
        plan = Plan(steps=list(st.plan_steps), answer=st.drafted_answer)
        views = self._views(plan)  # no step runs while the reviewer reads them (outputs may come from the store)
        reviewed = (st.plan_version, review_input(plan, views))
        if self._reviewed is not None and self._reviewed[0] < reviewed[0] and self._reviewed[1] == reviewed[1]:
            # Only after a replan: a retried step that failed the same way may still be transient, and has its cap.
            raise self._repeated_plan_stop()
        self._reviewed = reviewed
        again = st.second_look()
        stream = AnswerEvents(self._sink)  # the answer as it is written, once the reply accepts
        reflection = await self._ask("reflector", lambda: self._rt.reflect(
            st.task_id, st.task, plan, views, again, self._cost(), st.output, stream.out))
        # Code checks the answer before the verdict counts (an accept it contradicts or a check refuses is not one).
        context, recorded, fault = await checked_review(
            reflection, st.task, views, plan, builtin=self._cfg.builtin_checks, checks=self._checks,
            arguments=self._resolved_input, timeout_s=self._cfg.check_timeout_s, output=st.output,
            step_retries=st.step_retries,
            replans=st.replans, limits=self._cfg.policy_limits(st.extra_replans),
            reviewed_again=st.reviewed_again(), final_figure_look=self._final_figure_look)
        graph = context if self._exec is None else self._exec.with_graph(context)  # retries the graph allows
        decision = None if fault is not None else decide(graph)
        st.reflections.append(recorded if decision is None else recorded_with(recorded, decision))
        if not isinstance(decision, Accept):
            stream.void(fault or decision_reason(decision) or decision_kind(decision))
        if decision is None:
            raise TaskStop("failed", "check_failed", error=fault)
        if context.checked:
            st.checked_answer = reflection.answer
        if st.cached_template is not None and not st.cache_outcome_recorded and self._memory is not None \
                and not isinstance(decision, ReviewAgain):
            # A reused plan is judged at its first reflection: anything but accept is a wrong reuse (a second
            # review of the same results judges the answer's wording, not the plan).
            st.cache_outcome_recorded = True
            self._memory.record_reuse(st.cached_template, isinstance(decision, Accept))
        self._sink.emit(ReflectedPayload(reflection=st.reflections[-1], decision=decision_kind(decision),
                                         reason=decision_reason(decision)), self._snapshot())
        return decision

    def _apply(self, decision: Decision) -> None:
        st = self.state
        match decision:
            case Accept(answer=answer):
                raise TaskStop("accepted", "accepted", answer=answer or self._fallback_answer())
            case RetryStep(step_id=step_id, modification=modification):
                st.step_retries[step_id] = st.step_retries.get(step_id, 0) + 1
                if modification:
                    st.modifications[step_id] = modification
                assert self._exec is not None
                self._exec.retry(step_id)
                st.phase = "execute"
            case Replan(feedback=feedback):
                self._start_replan(feedback)
            case ReviewAgain(feedback=feedback, reason=reason):
                st.review_again = ReviewAgainNote(feedback=feedback, reason=reason,
                                                  plan_version=st.plan_version, asked_at=len(st.reflections))
                st.phase = "reflect"
            case Escalate(reason=reason, question=question, cause=cause):
                question = self._with_checked_answer(question)
                raise TaskStop("escalated", "escalated_by_reflector" if cause == "reflector" else cause,
                            question=question, answer=self._proposed_answer(),
                            escalation=Escalation(kind="reflector" if cause == "reflector" else "caps",
                                                  reason=reason, question=question))
            case _:
                assert_never(decision)

    def _repeated_plan_stop(self) -> TaskStop:
        """Fail fast: the replan wrote the plan again that the reviewer already turned down, and its steps gave the
        same results, so a review would read the same prompt and give the same verdict (``repeated_plan_question``)."""
        proposed = self._proposed_answer()
        reason, question = repeated_plan_question(self.state.plan_version, self._feedback, proposed,
                                                  proposed is not None and proposed == self.state.checked_answer)
        return TaskStop("escalated", "loop_detected", question=question, answer=proposed,
                     escalation=Escalation(kind="caps", reason=reason, question=question))

    def _proposed_answer(self) -> str | None:
        """The answer an escalation proposes (and ``orch.respond(id, "approve")`` accepts): the latest one code
        found consistent with the results, else the last review's (``agents.engine.questions``)."""
        last = self.state.reflections[-1].answer if self.state.reflections else None
        return self.state.checked_answer or last

    def _with_checked_answer(self, question: str) -> str:
        st = self.state
        return with_checked_answer(question, st.checked_answer, st.reflections[-1].answer if st.reflections else None)

    def _fallback_answer(self) -> str | None:
        return fallback_answer(self.state.plan_steps, self._outputs())

    def _start_replan(self, feedback: str, plan: Plan | None = None) -> None:
        """A new plan version: the planner's, told ``feedback``, or ``plan`` when code wrote it (the feedback then
        says what code changed, for the replanned event)."""
        st = self.state
        self._feedback = feedback
        previous = Plan(steps=list(st.plan_steps))
        views = tuple(self._views(previous))
        outputs = self._outputs()
        kept = {v.step_id: (s, outputs[v.step_id]) for s, v in zip(previous.steps, views)
                if v.status == "completed" and v.step_id in outputs}
        st.replans += 1
        st.plan_version += 1
        st.plan_steps, st.steps, st.plan_complete, st.drafted_answer = [], {}, False, None
        st.step_retries, st.modifications, st.confirmed = {}, {}, []
        st.phase = "plan"
        self._exec = None
        self._sink.emit(ReplannedPayload(plan_version=st.plan_version, feedback=feedback,
                                         kept_steps=sorted(kept)), st)
        if plan is not None:
            self._exec = self._new_execution(kept=kept, stream=cached_plan_stream(plan))
            return
        self._exec = self._new_execution(kept=kept, replan=ReplanContext(
            feedback, previous, views, kept=tuple(sorted(kept)), rejected=tuple(st.rejected_calls)))

    def _apply_human_response(self) -> None:
        """Continue after orch.respond(): approve a pending tool call, accept, or replan with the human's words."""
        st = self.state
        esc, text = st.escalation, st.human_response or ""
        assert esc is not None
        st.escalation, st.human_response = None, None
        st.status = st.stopped_reason = st.question = None
        if esc.kind == "confirmation" and esc.step_id is not None:
            st.phase = "execute"
            if is_approval(text):
                st.confirmed.append(esc.step_id)
            else:
                self._exec = self._new_execution()
                self._exec.fail_unconfirmed(esc.step_id, f"a human refused this call: {text!r}")
            return
        if is_approval(text) and st.reflections:
            raise TaskStop("accepted", "accepted", answer=self._proposed_answer() or self._fallback_answer())
        st.extra_replans += 1
        self._start_replan(f"A human reviewer says: {text}")

    def _finish(self, stop: TaskStop) -> None:
        st = self.state
        st.status, st.stopped_reason, st.error = stop.status, stop.reason, stop.error
        st.answer, st.question, st.escalation = stop.answer, stop.question, stop.escalation
        st.finished_at = self._clock()
        st.phase = "waiting" if stop.status == "escalated" else "done"
        if stop.reason == "accepted" and self._memory is not None and learnable(self.state, self._cfg.confirm_replanned_writes, self._rt.tool_spec):
            self._memory.remember(st.task, Plan(steps=list(st.plan_steps)))
        if stop.escalation is not None:
            self._sink.emit(EscalatedPayload(reason=stop.escalation.reason, question=stop.escalation.question,
                                             kind=stop.escalation.kind, step_id=stop.escalation.step_id))
        self._sink.emit(TaskFinishedPayload(status=stop.status, stopped_reason=stop.reason, answer=stop.answer,
                                            error=stop.error, plan_cuts=list(st.plan_cuts),
                                            cancelled_by=st.cancelled.by if st.cancelled else None),
                        self._snapshot())
