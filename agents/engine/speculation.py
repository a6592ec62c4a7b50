"""Tool calls started before the model asks for them: a cached plan's reads, sent at submit beside the router.

When the plan cache has a plan of the task's shape (``agents.engine.memory_link``), its speculable steps
(``planning.speculation``: read-only, idempotent, arguments known from the task) are dispatched at once. When the
plan's step arrives and is the same call (tool and canonical arguments), the step gets the speculated call's
result instead of a new call: it is still started, finished and recorded like any step, and its
``step_finished`` event says ``speculative``. Anything else is discarded: a call no step asked for is cancelled
when the first plan has run (or the task ends), and a speculated call that failed is never the step's failure —
the step runs normally instead.

Budgets stay honest: a speculated call may not make a model call at all (its ``StepRequest.cost`` admits none,
so an argument repair is refused and the call counts as failed: the planner's step then runs, and repairs, as
usual), so it spends no token and no LLM call; it is started only when the task could start a step, and at most
``planning.speculation.MAX_SPECULATED`` of them.

    >>> reads = SpeculativeReads.start(runtime, state, steps, timeout_s=60, generation=0)   # doctest: +SKIP
    >>> execution = PlanExecution(state, reads.runtime(runtime), ...)                        # doctest: +SKIP
    >>> await reads.close()                                                                  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.config.prices import CostBudget, PriceTable
from agents.engine.runtime import Runtime, StepHandle
from agents.engine.task_state import TaskState
from agents.roles.messages import StepOutcome, StepRequest
from agents.tools import ToolSpec
from planning.models import PlanStep
from planning.speculation import ToolFacts, call_key, may_use

__all__ = ["NO_MODEL_CALLS", "SpeculativeReads", "tool_facts"]

NO_MODEL_CALLS = CostBudget(PriceTable(), max_cost_usd=0.0, spent_usd=0.0)
"""The money budget a speculated call carries: it prices no model, so the executor's meter refuses every model
call before it is sent (``agents.roles.cost_meter``)."""


def tool_facts(spec: ToolSpec | None) -> ToolFacts | None:
    if spec is None:
        return None
    return ToolFacts(read=spec.permission == "read", idempotent=spec.idempotent,
                     needs_human=spec.requires_confirmation, takes_key=spec.key_param is not None)


@dataclass(slots=True)
class _Call:
    handle: StepHandle
    outcome: asyncio.Future[StepOutcome]


class SpeculativeReads:
    """The calls started early for one task, by call key; each serves at most one step (``take``)."""

    def __init__(self, calls: dict[str, _Call]) -> None:
        self._calls = calls
        self.started = len(calls)
        self.used = 0

    @classmethod
    def start(cls, runtime: Runtime, state: TaskState, steps: Sequence[PlanStep], *, timeout_s: float,
              generation: int) -> SpeculativeReads:
        """Dispatch ``steps`` (already chosen by ``planning.speculation.speculable_steps``) together."""
        requests = [StepRequest(task_id=state.task_id, task=state.task, plan_version=1, step=step, attempt=1,
                                timeout_s=timeout_s, generation=generation, cost=NO_MODEL_CALLS) for step in steps]
        handles = runtime.dispatch_many([(r, {}) for r in requests]) if requests else []
        calls = {}
        for request, handle in zip(requests, handles, strict=True):
            assert request.step.tool_name is not None  # speculable steps call a tool
            calls[call_key(request.step.tool_name, request.step.tool_input)] = _Call(
                handle, asyncio.ensure_future(_outcome(handle)))
        return cls(calls)

    @property
    def pending(self) -> int:
        """Calls started and not (yet) taken by a step."""
        return len(self._calls)

    def take(self, request: StepRequest) -> _Call | None:
        """The speculated call that serves this dispatch, removed (never served twice), or None."""
        key = may_use(request.step, attempt=request.attempt, modification=request.modification,
                      plan_version=request.plan_version)
        if key is None or request.confirmed:
            return None
        call = self._calls.pop(key, None)
        if call is not None:
            self.used += 1
        return call

    def runtime(self, inner: Runtime) -> Runtime:
        """``inner``, with each dispatch of a step a speculated call serves answered from that call."""
        return _ServedRuntime(inner, self)

    async def close(self) -> None:
        """Cancel every call no step took (the first plan has run, or the task ends)."""
        calls, self._calls = list(self._calls.values()), {}
        for call in calls:
            call.handle.cancel()
            call.outcome.cancel()
        for call in calls:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await call.outcome


async def _outcome(handle: StepHandle) -> StepOutcome:
    return await handle.outcome()


class _ServedHandle:
    """A step's handle answered by a speculated call: its outcome, renamed to the step and marked speculative,
    when it succeeded; else the step dispatched now, as it would have been (the speculated failure is dropped)."""

    def __init__(self, call: _Call, inner: Runtime, request: StepRequest, inputs: Mapping[int, Any]) -> None:
        self._call, self._inner, self._request, self._inputs = call, inner, request, inputs
        self._current: StepHandle = call.handle
        self._rerun: StepHandle | None = None
        self._result: StepOutcome | None = None
        self.executor: str = getattr(call.handle, "executor", "")

    @property
    def output_ref(self) -> Any:
        return self._current.output_ref

    async def outcome(self) -> StepOutcome:
        try:
            # Only this handle's cancel() cancels a taken call (close() cancels the untaken ones): a CancelledError
            # here means the step itself is being stopped.
            outcome: StepOutcome | None = await self._call.outcome
        except Exception:  # noqa: BLE001 - a lost executor: the step runs normally
            outcome = None
        if outcome is not None and outcome.ok:
            self._result = dataclasses.replace(outcome, step_id=self._request.step.step_id,
                                               attempt=self._request.attempt, speculative=True)
            return self._result
        self._rerun = self._current = self._inner.dispatch(self._request, self._inputs)
        self.executor = getattr(self._rerun, "executor", self.executor)
        self._result = await self._rerun.outcome()
        return self._result

    def settled(self) -> StepOutcome | None:
        if self._result is not None:
            return self._result
        return self._rerun.settled() if self._rerun is not None else None

    def cancel(self) -> None:
        self._call.handle.cancel()
        self._call.outcome.cancel()
        if self._rerun is not None:
            self._rerun.cancel()

    def replace_executor(self) -> None:
        self._current.replace_executor()


class _ServedRuntime:
    """A runtime whose dispatches are served by speculated calls where they match; everything else is ``inner``'s."""

    def __init__(self, inner: Runtime, reads: SpeculativeReads) -> None:
        self._inner, self._reads = inner, reads

    def __getattr__(self, name: str) -> Any:  # route, plan, fetch, reflect, tool_spec: the inner runtime's
        return getattr(self._inner, name)

    def dispatch(self, req: StepRequest, inputs: Mapping[int, Any]) -> StepHandle:
        return self.dispatch_many([(req, inputs)])[0]

    def dispatch_many(self, items: Sequence[tuple[StepRequest, Mapping[int, Any]]]) -> list[StepHandle]:
        served: dict[int, StepHandle] = {}
        for i, (req, inputs) in enumerate(items):
            call = self._reads.take(req)
            if call is not None:
                served[i] = _ServedHandle(call, self._inner, req, inputs)
        rest = [item for i, item in enumerate(items) if i not in served]
        sent = iter(self._inner.dispatch_many(rest) if rest else [])
        return [served[i] if i in served else next(sent) for i in range(len(items))]
