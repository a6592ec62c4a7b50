"""How a plan version's steps arrive: the streamed plan's items taken into the scheduler as they come (a step, a
restart of the plan, its end or its failure), with the kept outputs of a replan preloaded. The first base of
``agents.engine.execution.PlanExecution``, which holds the state named below; the next,
``agents.engine.step_dispatch.StepDispatch``, starts what is ready.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, assert_never

from agents.engine.plan_feed import PlanFeed, StreamEnded
from agents.engine.runtime import Runtime
from agents.engine.sink import TaskSink
from agents.engine.step_records import StepFacts
from agents.engine.step_run import Running
from agents.engine.stops import Stopped
from agents.engine.task_state import TaskState
from agents.events import PlanCut, PlanStepPayload
from agents.llm.base import Spend
from agents.roles.messages import PlanCallStarted, PlanCompleted, PlanFailed, PlanItem, PlanRestarted, StepEmitted
from dag.errors import DagError
from dag.scheduler import Scheduler
from dag.scheduler import StepState as SchedState
from planning.delta import same_call
from planning.models import PlanStep

__all__ = ["PlanIntake"]


class PlanIntake:
    """The plan-stream half of a plan execution (the state is its subclass's; see its ``__init__``)."""

    _st: TaskState
    _rt: Runtime
    _sink: TaskSink
    _sched: Scheduler
    _index: tuple[list[PlanStep], dict[int, PlanStep]] | None
    _facts: dict[int, StepFacts]
    _kept: dict[int, tuple[PlanStep, Any]]
    values: dict[int, Any]
    _running: dict[asyncio.Future[Any], Running]
    _plan_written: int
    _plan_iter: AsyncIterator[PlanItem] | None
    _feed: PlanFeed[PlanItem] | None
    _plan_broken: bool
    _stopped: Stopped | None

    @property
    def _steps(self) -> dict[int, PlanStep]:
        """The plan's steps by id, an index of the task state's plan (the one copy of it): the plan only grows by
        appends or is replaced by a new list, so the index follows it by identity and length."""
        plan = self._st.plan_steps
        if self._index is None or self._index[0] is not plan:
            self._index = (plan, {})
        index = self._index[1]
        if len(index) != len(plan):
            index.update((s.step_id, s) for s in plan[len(index):])
        return index

    def _charge(self, role: str, spend: Spend) -> None:
        raise NotImplementedError

    def _take_plan_items(self, feed: PlanFeed[PlanItem]) -> None:
        """Every plan item that arrived since the last wake-up, in order (their steps are dispatched together)."""
        try:
            items = feed.take()
        except StreamEnded:
            items, self._stopped = [], Stopped("invalid_llm_output", "the planner stopped without finishing its plan")
        for item in items:
            if self._stopped is not None:
                break
            self._on_plan_item(item)
        if feed.done and self._feed is feed:
            self._feed = None

    def _on_plan_item(self, item: PlanItem) -> None:
        match item:
            case PlanCallStarted():
                pass  # its cost matters only to a speculative plan that is abandoned (engine/prefetch.py)
            case StepEmitted(step=step):
                self._add_step(step)
            case PlanRestarted():
                self._restart()
            case PlanCompleted(plan=plan, spend=spend, cut=cut):
                self._plan_iter = None  # exhausted: a later run() (retry_step) must not read it again
                self._sched.seal()
                self._st.plan_complete = True
                self._st.drafted_answer = plan.answer
                if cut is not None:
                    self._st.plan_cuts.append(PlanCut(plan_version=self._st.plan_version, repeated=cut))
                self._charge("planner", spend)
            case PlanFailed(error=error, reason=reason, spend=spend):
                self._plan_iter = None
                self._stopped = Stopped(reason, error)
                self._charge("planner", spend)
            case _:
                assert_never(item)

    def _add_step(self, step: PlanStep) -> None:
        sid = step.step_id
        self._register_secrets(step)
        self._facts[sid] = StepFacts()
        self._st.plan_steps.append(step)
        kept = self._kept.get(sid)
        try:
            if kept is not None and same_call(kept[0], step) and all(
                    d in self._steps and self._sched.state(d) is SchedState.COMPLETED for d in step.depends_on):
                self._sched.preload(sid, step.depends_on, kept[1])
                self.values[sid] = kept[1]
                self._sink.put_output(self._st.plan_version, sid, 0, kept[1])
            else:
                self._sched.add_step(sid, step.depends_on)
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

    def _restart(self) -> None:
        """The planner is repairing its plan: forget the broken one (running steps are cancelled, and so are
        pending writes of their outputs: they would land in the repaired plan's state under the same ids)."""
        for fut, run in list(self._running.items()):
            run.handle.cancel()
            fut.cancel()
        self._running.clear()
        self._plan_written = 0
        self._sched = Scheduler()
        self._facts.clear()
        self.values.clear()
        self._st.plan_steps, self._st.drafted_answer = [], None
        self._plan_broken = False

