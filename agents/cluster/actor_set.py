"""The driver's actors as one set: where each goes (``Deployment.placement``, custom resources, the store's
node), how they start (``create_actors``, which applies every fault-tolerance option), and how they stop.
The actor classes themselves are in ``agents.cluster.actors``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from agents.checks.api import Check
from agents.cluster.actors import (
    JournalActor,
    PlannerActor,
    ReflectorActor,
    RouterActor,
    SupervisorActor,
    replica_names,
)
from agents.cluster.executor_actor import ExecutorActor
from agents.cluster.placement import NodeView, nodes_from_ray, plan_executors, plan_roles
from agents.cluster.shards import shard_name
from agents.config import RuntimeConfig
from agents.errors import ActorStartError
from agents.llm.base import LLM
from agents.llm.profile import profile_of
from agents.tools import Tool, ToolRegistry
from agents.tools.mcp import MCPServer

__all__ = ["ActorSet", "ExecutorFactory", "cluster_nodes", "create_actors", "kill_actors", "plan_initial_executors"]


@dataclass
class ActorSet:
    supervisor: Any
    """Shard 0 (the only one by default)."""
    routers: list[Any]
    planners: list[Any]
    reflectors: list[Any]
    executors: list[Any]
    journal: Any
    executor_nodes: list[str | None] = field(default_factory=list)
    """The node each executor was placed on (None: Ray chose); an executor restarted after its node died
    runs elsewhere."""
    supervisors: list[Any] = field(default_factory=list)
    """Every shard, by index (``supervisors[0] is supervisor``)."""

    @property
    def router(self) -> Any:
        return self.routers[0]

    @property
    def planner(self) -> Any:
        return self.planners[0]

    @property
    def reflector(self) -> Any:
        return self.reflectors[0]

    def all(self) -> list[Any]:
        shards = self.supervisors or [self.supervisor]
        return [*shards, *self.routers, *self.planners, *self.reflectors, self.journal, *self.executors]


def _options(config: RuntimeConfig, role: str, name: str, **extra: Any) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "name": name, "namespace": config.deployment.namespace, "num_cpus": 0,
        "max_restarts": config.deployment.actor_max_restarts, "max_concurrency": 1000,
    }
    resources = config.deployment.role_resources.get(role)
    if resources:
        opts["resources"] = dict(resources)
    opts.update(extra)
    return opts


# Ray (2.60) ignores a *soft* node affinity for an actor that requests no resources at all: four such actors
# aimed at nodes a, b, b, a landed on a, a, a, b; with any resource request they land as asked. A token CPU
# share makes the affinity hold and costs nothing measurable.
_TOKEN_CPU = 0.001


def _on(node_id: str | None, config: RuntimeConfig, role: str) -> dict[str, Any]:
    if node_id is None:
        return {}
    # Soft: if the node dies, Ray restarts the actor on another node instead of waiting for this one.
    extra: dict[str, Any] = {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=True)}
    if not any(amount > 0 for amount in config.deployment.role_resources.get(role, {}).values()):
        extra["num_cpus"] = _TOKEN_CPU
    return extra


def cluster_nodes() -> list[NodeView]:
    return nodes_from_ray(ray.nodes())


_CONTROL_CALLS = 16
"""Concurrent calls an executor takes beyond its step limit: control calls are never queued behind steps."""


class ExecutorFactory:
    """Starts executors (at start-up and when nodes join) with consecutive numbers, so the Supervisor's
    pool index, the actor name and the name in events agree."""

    def __init__(self, config: RuntimeConfig, llm: LLM, tools: Sequence[Tool], instance: str) -> None:
        self._config, self._llm, self._tools, self._instance = config, llm, list(tools), instance
        self.count = 0
        self.started: list[Any] = []
        """Every executor this factory started (so shutdown kills the ones added later as well)."""

    def start(self, node_ids: Sequence[str | None]) -> list[Any]:
        handles, dep = [], self._config.deployment
        for node_id in node_ids:
            i = self.count
            self.count += 1
            handles.append(ray.remote(ExecutorActor).options(**_options(
                self._config, "executor", f"executor-{self._instance}-{i}",
                # The actor limits its running steps itself (a batch is one call but many steps); the calls
                # beyond that limit are control calls (cancel_steps, use_tools, ping), never queued behind steps.
                max_concurrency=dep.executor_max_concurrency + _CONTROL_CALLS,
                **_on(node_id, self._config, "executor"),
            )).remote(self._tools, self._llm, self._config.executor_options(), f"executor-{i}",
                      f"journal-{self._instance}", dep.namespace, f"supervisor-{self._instance}",
                      dep.executor_max_concurrency))
        self.started.extend(handles)
        return handles


def plan_initial_executors(config: RuntimeConfig, nodes: Sequence[NodeView], home: str) -> list[str | None]:
    dep = config.deployment
    request = dep.role_resources.get("executor", {})
    if dep.executors_per_node is not None:
        planned: list[str | None] = list(plan_executors(nodes, home, request, dep.executors_per_node, {}))
        if planned:
            return planned
    if dep.placement == "spread":
        return plan_roles(nodes, home, request, dep.num_executors)
    return [None] * dep.num_executors


def create_actors(config: RuntimeConfig, llm: LLM, tools: Sequence[Tool], instance: str,
                  factory: ExecutorFactory | None = None, servers: Sequence[MCPServer] = (),
                  checks: Sequence[Check] = ()) -> ActorSet:
    """Create every actor of one Orchestrator. The Supervisor and the journal (both write the SQLite
    store) are pinned to the driver's node; role replicas and executors are spread over the other nodes
    (``Deployment.placement``), within their custom resources."""
    registry = ToolRegistry(tools)
    catalog, schemas = registry.catalog_text(), registry.schemas()
    specs = {t.name: t.spec for t in registry}
    home = ray.get_runtime_context().get_node_id()
    here = NodeAffinitySchedulingStrategy(node_id=home, soft=False)
    if config.store_url is None:
        config.store_path.parent.mkdir(parents=True, exist_ok=True)
    nodes, dep = cluster_nodes(), config.deployment

    def nodes_for(role: str, count: int) -> list[str | None]:
        if dep.placement != "spread":
            return [None] * count
        return plan_roles(nodes, home, dep.role_resources.get(role, {}), count)

    journal = ray.remote(JournalActor).options(
        **_options(config, "journal", f"journal-{instance}", scheduling_strategy=here, max_task_retries=-1)
    ).remote(str(config.store_location()))

    def replicas_of(shell: type, role: str, *args: Any) -> list[Any]:
        return [ray.remote(shell).options(**_options(config, role, name, **_on(node, config, role))).remote(*args)
                for name, node in zip(replica_names(role, instance, dep.role_replicas),
                                      nodes_for(role, dep.role_replicas))]

    routers, planners, reflectors = ([], [], []) if dep.roles_in_shards else (
        replicas_of(RouterActor, "router", llm, catalog, config.router_options()),
        replicas_of(PlannerActor, "planner", llm, schemas, catalog, config.planner_options()),
        replicas_of(ReflectorActor, "reflector", llm, config.prompt_options(), catalog))
    factory = factory or ExecutorFactory(config, llm, tools, instance)
    executor_nodes = plan_initial_executors(config, nodes, home)
    executors = factory.start(executor_nodes)
    # The supervisor looks its peers up by name, so they must be registered before it starts.
    _wait_started([*routers, *planners, *reflectors, *executors], journal, config)
    supervisors = [ray.remote(SupervisorActor).options(**_options(
        config, "supervisor", shard_name(instance, k), max_task_retries=-1, max_concurrency=100_000, **where,
    )).remote(config, instance, specs, list(tools) if servers or dep.roles_in_shards else (), list(servers),
              k, list(checks), llm if dep.roles_in_shards else None, profile_of(llm))
        for k, where in enumerate(_shard_placement(config, nodes, home))]
    return ActorSet(supervisors[0], routers, planners, reflectors, executors, journal, executor_nodes, supervisors)


def _shard_placement(config: RuntimeConfig, nodes: Sequence[NodeView], home: str) -> list[dict[str, Any]]:
    """Shard 0 on the driver's node; more shards spread over the other nodes when the store is a server every
    node reaches (soft: a shard whose node dies comes back on another), else on the driver's node with the file."""
    pinned = {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=home, soft=False)}
    if config.supervisors == 1 or config.store_url is None:
        return [pinned] * config.supervisors
    others = [n.node_id for n in nodes if n.alive and n.node_id != home] + [home]
    return [pinned] + [_on(others[(k - 1) % len(others)], config, "supervisor") for k in range(1, config.supervisors)]


def _wait_started(roles: list[Any], journal: Any, config: RuntimeConfig, timeout_s: float = 300) -> None:
    try:
        ray.get([a.ping.remote() for a in roles] + [journal.get.remote("")], timeout=timeout_s)
    except ray.exceptions.GetTimeoutError:
        raise ActorStartError(
            f"the role actors did not start within {timeout_s:.0f}s; Ray cannot place them. Check that the "
            "cluster has the resources named in RuntimeConfig.deployment.role_resources "
            f"({dict(config.deployment.role_resources)}) "
            "and free CPUs (`ray status`)") from None


def kill_actors(actors: ActorSet) -> None:
    for handle in actors.all():
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
