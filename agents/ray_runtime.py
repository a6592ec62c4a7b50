"""``Runtime`` over Ray actors. Lives in the Supervisor process.

Step outputs stay in the object store: an executor returns two objects (small outcome, output), the
Supervisor awaits only the outcome and hands the output's ObjectRef to dependent steps.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import ray
from ray.exceptions import (
    ActorDiedError,
    ActorUnavailableError,
    GetTimeoutError,
    RayActorError,
    TaskCancelledError,
)

from agents.role_types import (
    PlanItem,
    PlanRestarted,
    ReplanContext,
    RoleResult,
    StepEmitted,
    StepOutcome,
    StepRequest,
    StepView,
)
from agents.runtime import ExecutorLost, StepHandle
from agents.tools import ToolSpec
from planning.models import Plan, Reflection, RouterDecision

__all__ = ["RayRuntime", "RoleUnavailableError"]

log = logging.getLogger("tetrarch.ray")
T = TypeVar("T")

_ACTOR_ERRORS = (RayActorError, ActorDiedError, ActorUnavailableError)
_ROLE_RETRIES = 8


class RoleUnavailableError(RuntimeError):
    """A role actor stayed unreachable through every restart we waited for."""


class _RayStepHandle:
    def __init__(self, meta_ref: ray.ObjectRef, output_ref: ray.ObjectRef, on_done: Callable[[], None],
                 executor: str) -> None:
        self._meta = meta_ref
        self.output_ref: Any = output_ref
        self._on_done = on_done
        self.executor = executor

    async def outcome(self) -> StepOutcome:
        try:
            return await self._meta
        except _ACTOR_ERRORS as exc:
            raise ExecutorLost(str(exc).splitlines()[0]) from exc
        finally:
            self._on_done()

    def cancel(self) -> None:
        try:
            ray.cancel(self._meta)
        except Exception:  # noqa: BLE001 - cancelling a finished or lost task is fine
            pass


class RayRuntime:
    def __init__(self, router: Any, planner: Any, reflector: Any, executors: Sequence[Any],
                 tool_specs: Mapping[str, ToolSpec]) -> None:
        self._router, self._planner, self._reflector = router, planner, reflector
        self._executors = list(executors)
        self._inflight = [0] * len(self._executors)
        self._specs = dict(tool_specs)

    def add_executors(self, executors: Sequence[Any]) -> None:
        """Grow the pool (a node joined)."""
        self._executors.extend(executors)
        self._inflight.extend([0] * len(executors))

    async def _with_restarts(self, call: Callable[[], Awaitable[T]], role: str) -> T:
        delay = 0.2
        for attempt in range(_ROLE_RETRIES):
            try:
                return await call()
            except _ACTOR_ERRORS as exc:
                if attempt == _ROLE_RETRIES - 1:
                    raise RoleUnavailableError(f"the {role} actor is unavailable: {exc}") from exc
                log.warning("%s actor unavailable (%s); retrying in %.1fs", role, type(exc).__name__, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        raise AssertionError("unreachable")

    async def route(self, task_id: str, task: str) -> RoleResult[RouterDecision]:
        return await self._with_restarts(lambda: self._router.route.remote(task_id, task), "router")

    async def reflect(self, task_id: str, task: str, plan: Plan, results: list[StepView]) -> RoleResult[Reflection]:
        return await self._with_restarts(lambda: self._reflector.reflect.remote(task_id, task, plan, results),
                                         "reflector")

    async def plan(self, task_id: str, task: str, replan: ReplanContext | None) -> AsyncIterator[PlanItem]:
        delay = 0.2
        for attempt in range(_ROLE_RETRIES):
            emitted = False
            try:
                stream = self._planner.plan.options(num_returns="streaming").remote(task_id, task, replan)
                async for ref in stream:
                    item = await ref
                    emitted = emitted or isinstance(item, StepEmitted)
                    yield item
                return
            except _ACTOR_ERRORS as exc:
                if attempt == _ROLE_RETRIES - 1:
                    raise RoleUnavailableError(f"the planner actor is unavailable: {exc}") from exc
                if emitted:
                    yield PlanRestarted(f"the planner restarted: {type(exc).__name__}")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def dispatch(self, req: StepRequest, inputs: Mapping[int, Any]) -> StepHandle:
        index = min(range(len(self._executors)), key=self._inflight.__getitem__)
        self._inflight[index] += 1

        def done(i: int = index) -> None:
            self._inflight[i] = max(0, self._inflight[i] - 1)

        meta_ref, output_ref = self._executors[index].run.options(num_returns=2).remote(req, dict(inputs))
        return _RayStepHandle(meta_ref, output_ref, done, f"executor-{index}")

    async def fetch(self, output_ref: Any) -> Any:
        if isinstance(output_ref, ray.ObjectRef):
            return await output_ref
        return output_ref

    def tool_spec(self, name: str | None) -> ToolSpec | None:
        return self._specs.get(name) if name else None


# Kept for callers that want to match on these without importing ray.exceptions.
TRANSIENT_RAY_ERRORS = (*_ACTOR_ERRORS, GetTimeoutError, TaskCancelledError)
