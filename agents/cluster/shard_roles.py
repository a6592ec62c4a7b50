"""``Deployment(roles_in_supervisors=True)``: the router, planner and reviewer as plain objects inside a
Supervisor shard's process, the executors still actors.

A role call is then an await on the shard's own loop: no actor call, no pickling of the task, the plan stream
or the results. With a fast model that is most of a task's CPU (three actor round trips of four per one-step
task); with a slow one it changes nothing, since the roles' model calls are I/O the loop waits on. Each shard
holds its own copy of the roles, so roles scale with shards rather than with ``role_replicas``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from agents.cluster.ray_runtime import RayRuntime
from agents.config import RuntimeConfig
from agents.config.prices import CostBudget
from agents.outputs import OutputSpec
from agents.llm.base import LLM
from agents.roles.messages import PlanItem, ReplanContext, RoleResult, SecondLook, StepView
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools import ToolRegistry, ToolSpec
from planning.models import Plan, Reflection, RouterDecision

__all__ = ["ShardRolesRuntime"]


class ShardRolesRuntime(RayRuntime):
    """``RayRuntime`` whose role calls go to role objects in this process; steps still go to executor actors."""

    def __init__(self, llm: LLM, tools: Sequence[Any], config: RuntimeConfig, executors: Sequence[Any],
                 tool_specs: Mapping[str, ToolSpec]) -> None:
        registry = ToolRegistry(tools)
        catalog = registry.catalog_text()
        self._local_router = Router(llm, catalog, config.router_options())
        self._local_planner = Planner(llm, registry.schemas(), catalog, config.planner_options())
        self._local_reflector = Reflector(llm, config.prompt_options(), catalog)
        super().__init__((self._local_router,), (self._local_planner,), (self._local_reflector,), executors,
                         tool_specs)

    def warm_up(self) -> None:
        """What the role actors do when they start (``agents.cluster.actors.WarmOnStart``)."""
        for role in (self._local_router, self._local_planner, self._local_reflector):
            role.warm_up()

    async def route(self, task_id: str, task: str, history: str = "",
                    cost: CostBudget | None = None) -> RoleResult[RouterDecision]:
        return await self._local_router.route(task_id, task, history, cost)

    async def plan(self, task_id: str, task: str, replan: ReplanContext | None,
                   history: str = "", cost: CostBudget | None = None) -> AsyncIterator[PlanItem]:
        async for item in self._local_planner.plan(task_id, task, replan, history, cost):
            yield item

    async def reflect(self, task_id: str, task: str, plan: Plan, results: list[StepView],
                      again: SecondLook | None = None, cost: CostBudget | None = None,
                      output: OutputSpec | None = None, answer: Any = None) -> RoleResult[Reflection]:
        return await self._local_reflector.reflect(task_id, task, plan, results, again, cost, output, answer)

    async def use_tools(self, tools: Sequence[Any]) -> None:
        """Executors first (``RayRuntime.use_tools``), then this shard's roles."""
        registry = await self._push_to_executors(tools)
        catalog = registry.catalog_text()
        self._local_router.use_tools(catalog)
        self._local_planner.use_tools(registry.schemas(), catalog)
        self._local_reflector.use_tools(catalog)
