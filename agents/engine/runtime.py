"""How the task state machine reaches the roles: a small protocol with two implementations.

``LocalRuntime`` calls the role objects in-process (unit tests, no Ray); ``agents.cluster.ray_runtime.RayRuntime``
calls the Ray actors and keeps step outputs in the object store. The state machine
(``agents.engine.task_runner``) cannot tell them apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol

from agents.config.prices import CostBudget
from agents.outputs import OutputSpec
from agents.roles.answer_feed import AnswerOut
from agents.roles.executor import Executor
from agents.roles.messages import (PlanItem, ReplanContext, RoleResult, SecondLook, StepOutcome, StepRequest,
                                   StepView)
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools import Tool, ToolRegistry, ToolSpec
from planning.models import Plan, Reflection, RouterDecision

__all__ = ["ExecutorLost", "LocalRuntime", "Runtime", "StepHandle"]


class ExecutorLost(Exception):
    """The executor running a step died; the step may be dispatched again elsewhere."""


class StepHandle(Protocol):
    output_ref: Any
    """Opaque handle of the step's output: an ObjectRef on Ray, the value itself locally."""
    executor: str
    """Name of the executor the step was sent to (shown in events and traces)."""

    async def outcome(self) -> StepOutcome: ...

    def settled(self) -> StepOutcome | None:
        """The outcome if it has already arrived, without waiting; else None."""
        ...

    def cancel(self) -> None: ...

    def replace_executor(self) -> None:
        """The executor stopped answering (a tool wedged its process): replace it, so later steps do not queue
        behind the wedged one."""
        ...


class Runtime(Protocol):
    """``cost`` (route, plan, reflect; a step's ``StepRequest.cost``): the task's money budget, carried to the
    role, which checks each of its model calls against it (``agents.roles.cost_meter``)."""

    async def route(self, task_id: str, task: str, history: str = "",
                    cost: CostBudget | None = None) -> RoleResult[RouterDecision]: ...

    def plan(self, task_id: str, task: str, replan: ReplanContext | None,
             history: str = "", cost: CostBudget | None = None) -> AsyncIterator[PlanItem]: ...

    def dispatch(self, req: StepRequest, inputs: Mapping[int, Any]) -> StepHandle: ...

    def dispatch_many(self, items: Sequence[tuple[StepRequest, Mapping[int, Any]]]) -> list[StepHandle]:
        """Steps that became ready together (a runtime may send them together); one handle each, in order."""
        ...

    async def fetch(self, output_ref: Any) -> Any: ...

    async def reflect(self, task_id: str, task: str, plan: Plan, results: list[StepView],
                      again: SecondLook | None = None, cost: CostBudget | None = None,
                      output: OutputSpec | None = None, answer: AnswerOut | None = None) -> RoleResult[Reflection]:
        """``output``: the task's output type (``agents.outputs``); ``answer``: where the answer goes while the
        review streams (``agents.roles.answer_feed``); a runtime that cannot stream it leaves it uncalled (the
        answer then arrives whole with the task's result)."""
        ...

    def tool_spec(self, name: str | None) -> ToolSpec | None: ...


class _LocalHandle:
    def __init__(self, task: asyncio.Task[StepOutcome], executor: str) -> None:
        self._task = task
        self.output_ref: Any = None
        self.executor = executor

    async def outcome(self) -> StepOutcome:
        outcome = await self._task
        self.output_ref = outcome.output
        return outcome

    def settled(self) -> StepOutcome | None:
        task = self._task
        if not task.done() or task.cancelled() or task.exception() is not None:
            return None
        outcome = task.result()
        self.output_ref = outcome.output
        return outcome

    def cancel(self) -> None:
        self._task.cancel()

    def replace_executor(self) -> None:
        self._task.cancel()  # in-process there is no executor process to replace


class LocalRuntime:
    """Everything in one process and one event loop."""

    def __init__(self, router: Router, planner: Planner, executors: list[Executor], reflector: Reflector,
                 tool_specs: Mapping[str, ToolSpec]) -> None:
        self._router, self._planner, self._reflector = router, planner, reflector
        self._executors = executors
        self._next = 0
        self._specs = dict(tool_specs)

    async def route(self, task_id: str, task: str, history: str = "",
                    cost: CostBudget | None = None) -> RoleResult[RouterDecision]:
        return await self._router.route(task_id, task, history, cost)

    def plan(self, task_id: str, task: str, replan: ReplanContext | None,
             history: str = "", cost: CostBudget | None = None) -> AsyncIterator[PlanItem]:
        return self._planner.plan(task_id, task, replan, history, cost)

    def dispatch(self, req: StepRequest, inputs: Mapping[int, Any]) -> StepHandle:
        index = self._next % len(self._executors)
        self._next += 1
        return _LocalHandle(asyncio.ensure_future(self._executors[index].run(req, dict(inputs))), f"executor-{index}")

    def dispatch_many(self, items: Sequence[tuple[StepRequest, Mapping[int, Any]]]) -> list[StepHandle]:
        return [self.dispatch(req, inputs) for req, inputs in items]

    async def fetch(self, output_ref: Any) -> Any:
        return output_ref

    async def reflect(self, task_id: str, task: str, plan: Plan, results: list[StepView],
                      again: SecondLook | None = None, cost: CostBudget | None = None,
                      output: OutputSpec | None = None, answer: AnswerOut | None = None) -> RoleResult[Reflection]:
        return await self._reflector.reflect(task_id, task, plan, results, again, cost, output, answer)

    def tool_spec(self, name: str | None) -> ToolSpec | None:
        return self._specs.get(name) if name else None

    async def use_tools(self, tools: Sequence[Tool]) -> None:
        """Give every role the new tool list (an MCP server's list changed): executors first, so a plan made
        with the new catalog never reaches an executor that lacks its tools."""
        registry = ToolRegistry(tools)
        for executor in self._executors:
            executor.use_tools(list(registry))
        catalog = registry.catalog_text()
        self._router.use_tools(catalog)
        self._planner.use_tools(registry.schemas(), catalog)
        self._reflector.use_tools(catalog)
        self._specs = {t.name: t.spec for t in registry}
