"""What a task starts at submit, beside the router's call: the plan cache's offer for it, the speculative plan
(``agents.engine.prefetch``) and the cached plan's reads (``agents.engine.speculation``). The task runner waits
for the router only; this module decides what runs meanwhile and ends what the route makes useless.

    >>> ctx = EarlyContext(state, config, runtime, sink, limits, memory)          # doctest: +SKIP
    >>> early = start_early(ctx, speculate_plan=True)                             # doctest: +SKIP
    >>> if route != "plan": await early.abandon()                                 # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.config import RuntimeConfig
from agents.engine.memory_link import CachedPlan, MemoryLink, PlanHint
from agents.engine.prefetch import PlanPrefetch
from agents.engine.runtime import Runtime
from agents.engine.sink import TaskSink, record_spend
from agents.engine.speculation import SpeculativeReads, tool_facts
from agents.engine.stops import Limits
from agents.engine.task_state import TaskState
from agents.errors import BudgetExceeded
from planning.models import Plan
from planning.speculation import speculable_steps

__all__ = ["EarlyContext", "EarlyWork", "start_early"]


@dataclass(frozen=True, slots=True)
class EarlyContext:
    """The task's runner parts the early work needs."""

    state: TaskState
    config: RuntimeConfig
    runtime: Runtime
    sink: TaskSink
    limits: Limits
    memory: MemoryLink | None


@dataclass(slots=True)
class EarlyWork:
    """The offer and the calls started at submit. Empty for a task resumed past its route."""

    ctx: EarlyContext | None = None
    reuse: CachedPlan | PlanHint | None = None
    prefetch: PlanPrefetch | None = None
    reads: SpeculativeReads | None = None

    @property
    def cached(self) -> CachedPlan | None:
        """A plan filled by code from a cached template: no planner call."""
        return self.reuse if isinstance(self.reuse, CachedPlan) else None

    @property
    def hint(self) -> str:
        """A cached template for the planner to adapt ("" if none)."""
        return self.reuse.text if isinstance(self.reuse, PlanHint) else ""

    def served(self, runtime: Runtime) -> Runtime:
        """The runtime a plan's execution dispatches through: speculated calls serve the steps they match."""
        return runtime if self.reads is None else self.reads.runtime(runtime)

    async def end_reads(self) -> None:
        """Cancel the speculated calls no step took (the first plan has run, or the task ends)."""
        if self.reads is not None:
            await self.reads.close()

    async def abandon(self) -> None:
        """The route is not ``plan`` (or the router failed): cancel the speculative plan, booking what it cost
        (no cap check: the task is ending or failing anyway, and its stop reason must stay the real one), and the
        speculated calls."""
        prefetch, self.prefetch = self.prefetch, None
        if prefetch is not None and self.ctx is not None:
            spend = await prefetch.abandon()
            record_spend(self.ctx.state, self.ctx.sink, "planner", spend, self.ctx.limits.budget.cost(spend))
        await self.end_reads()


def start_early(ctx: EarlyContext, *, speculate_plan: bool) -> EarlyWork:
    """Look the task up in the plan cache; start the plan beside the router when allowed and affordable (router +
    planner both fit) unless the cache filled it; start the cached plan's speculable reads when allowed."""
    work = EarlyWork(ctx, _cached_plan(ctx))
    st = ctx.state
    if work.cached is None and speculate_plan and ctx.limits.budget.affords(st.usage.total, calls=2):
        # ``hint`` rides in the planner's ``history`` context item, which is otherwise a session's earlier turns:
        # never both, since a follow-up does not use the cache.
        work.prefetch = PlanPrefetch(ctx.runtime.plan(st.task_id, st.task, None, work.hint or st.history,
                                                      ctx.limits.budget.for_call(st.usage)))
    guess = work.cached.plan if work.cached is not None else \
        work.reuse.guess if isinstance(work.reuse, PlanHint) else None
    work.reads = _start_reads(ctx, guess)
    return work


def _cached_plan(ctx: EarlyContext) -> CachedPlan | PlanHint | None:
    """What the plan cache (``RuntimeConfig.plan_cache``) offers this task: a plan filled by code, a template for
    the planner to adapt, or None (plan as usual)."""
    if ctx.memory is None or ctx.state.history:  # a follow-up's plan depends on more than its text
        return None

    def tool_schema(name: str) -> Mapping[str, Any] | None:
        spec = ctx.runtime.tool_spec(name)
        return None if spec is None else spec.parameters

    return ctx.memory.cached_plan(ctx.state.task, tool_schema, max_steps=ctx.config.max_steps)


def _start_reads(ctx: EarlyContext, plan: Plan | None) -> SpeculativeReads | None:
    """The speculable reads of the cached plan (filled, or the template's best guess when the planner adapts it),
    dispatched now (``ToolPolicy.speculate_reads``), if the task could start a step at all (its caps not reached)."""
    if plan is None or not ctx.config.tools.speculate_reads:
        return None
    try:
        ctx.limits.budget.check(ctx.state.usage.total, before_call=True)
    except BudgetExceeded:
        return None
    steps = speculable_steps(plan.steps, lambda name: tool_facts(ctx.runtime.tool_spec(name)))
    if not steps:
        return None
    return SpeculativeReads.start(ctx.runtime, ctx.state, steps, timeout_s=ctx.limits.dispatch.step_timeout_s,
                                  generation=ctx.sink.generation)
