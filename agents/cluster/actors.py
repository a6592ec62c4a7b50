"""The actors: the role classes (and the Supervisor core) made Ray actors; ``agents.cluster.actor_set``
creates them with every fault-tolerance and placement option.

Each actor builds its state in ``__init__`` from picklable arguments, so a restarted actor is whole again.
Only the executor (``agents.cluster.executor_actor``) and the Supervisor have classes of their own, because only
they do Ray work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import ray

from agents.checks.api import Check
from agents.cluster.driver_watch import DRIVER_LOST, DriverWatch, driver_alive
from agents.cluster.executor_actor import WhereAmI
from agents.cluster.ray_runtime import RayRuntime
from agents.cluster.shard_roles import ShardRolesRuntime
from agents.cluster.shards import shard_of
from agents.config import RuntimeConfig
from agents.config.prices import CostBudget
from agents.engine.supervisor import SupervisorCore
from agents.idempotency import ClaimReply, ClaimState, Fence
from agents.llm.base import LLM
from agents.llm.profile import HOSTED, ModelProfile
from agents.outputs import OutputSpec
from agents.roles.messages import PlanItem, ReplanContext, RoleResult, SecondLook, StepView
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.store import Store
from agents.store.journal import DEFAULT_CLAIM_GRACE_S, claim_reply, task_id_of_key
from agents.tools import Tool
from agents.tools.mcp import MCPServer, ToolCatalog, ToolRefresher
from planning.models import Plan, Reflection

__all__ = ["JournalActor", "PlannerActor", "ReflectorActor", "RouterActor", "SupervisorActor", "WarmOnStart",
           "replica_names"]

log = logging.getLogger("tetrarch.actors")


class WarmOnStart:
    """Mixed into the role actors: the role's ``warm_up`` runs when the actor starts (or restarts), while the
    model server starts, instead of in the first task's call. The tokenizer alone took 0.4 s there, the
    reviewer's whole first prompt 0.8 s (measured in the demo)."""

    warm_up: Callable[[], None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.warm_up()


# The role classes are Ray actors as they are: no shell forwards their methods. (The planner's ``plan`` is an
# async generator; called with num_returns="streaming", each item reaches the Supervisor when it is yielded.)
class RouterActor(WarmOnStart, Router, WhereAmI):
    pass


class PlannerActor(WarmOnStart, Planner, WhereAmI):
    async def plan_batched(self, task_id: str, task: str, replan: ReplanContext | None = None,
                           history: str = "",
                           cost: CostBudget | None = None) -> AsyncIterator[list[PlanItem]]:
        """``plan``'s items, the ones produced together in one list: the steps parsed from one chunk of the
        model's reply become one streamed Ray object instead of one each (a 1,000-step plan given in one
        reply crosses as one object, not 1,000)."""
        queue: asyncio.Queue[PlanItem | None] = asyncio.Queue()

        async def produce() -> None:
            try:
                async for item in self.plan(task_id, task, replan, history, cost):
                    queue.put_nowait(item)
            finally:
                queue.put_nowait(None)

        producer = asyncio.ensure_future(produce())
        try:
            while True:
                batch = [await queue.get()]
                while not queue.empty():
                    batch.append(queue.get_nowait())
                items = [item for item in batch if item is not None]
                if items:
                    yield items
                if len(items) < len(batch):
                    break
            await producer  # re-raises what the planner raised
        finally:
            producer.cancel()


class ReflectorActor(WarmOnStart, Reflector, WhereAmI):
    async def reflect_streamed(self, task_id: str, task: str, plan: Plan, results: list[StepView],
                               again: SecondLook | None = None, cost: CostBudget | None = None,
                               output: OutputSpec | None = None,
                               ) -> AsyncIterator[list[str | None] | RoleResult[Reflection]]:
        """``reflect`` with the answer's pieces as the reviewer writes them (its ``answer`` callback), crossing
        as lists of the pieces written together, then the review's result as the last item."""
        pieces: list[str | None] = []
        wake = asyncio.Event()

        def out(piece: str | None) -> None:
            pieces.append(piece)
            wake.set()

        review = asyncio.ensure_future(self.reflect(task_id, task, plan, results, again, cost, output, answer=out))
        review.add_done_callback(lambda _: wake.set())
        try:
            while not review.done():
                await wake.wait()
                wake.clear()
                if pieces:
                    # Taken before the yield: the review goes on writing while this generator waits at it, and
                    # a clear() after the yield dropped what arrived meanwhile (a piece lost under load).
                    batch, pieces[:] = pieces.copy(), []
                    yield batch
            if pieces:
                yield pieces.copy()
            yield await review  # re-raises what the review raised
        finally:
            review.cancel()


class JournalActor:
    """The idempotency journal, in the same store as the checkpoints (pinned with the Supervisor)."""

    def __init__(self, store: str, alive: Callable[[], bool] | None = None) -> None:
        self._store = Store(store)
        self._alive = alive or driver_alive

    def get(self, key: str):
        return self._store.journal_get(key)

    def put(self, key: str, output: Any) -> bool:
        task_id = key.split(":", 1)[0]
        return self._store.journal_put(key, task_id, output)

    def claim(self, key: str, fence: Fence) -> ClaimReply:
        """One SQL statement: of two live runners of the same write, only one gets the claim. A runner whose
        driver is gone gets none, and loses the task's lease (``agents.cluster.driver_watch``)."""
        if fence.generation and not self._alive():
            self._store.revoke_lease(task_id_of_key(key), fence.generation, DRIVER_LOST)
            return ClaimReply(ClaimState.LEASE_LOST, detail=DRIVER_LOST)
        return claim_reply(self._store.journal_claim(key, task_id_of_key(key), fence, DEFAULT_CLAIM_GRACE_S))

    def record(self, key: str, fence: Fence, output: Any) -> bool:
        return self._store.journal_record(key, fence, output)


class SupervisorActor(SupervisorCore, WhereAmI):
    """One per Orchestrator, or ``supervisors`` shards (``agents.cluster.shards``). Restarts itself (max_restarts)
    and then re-attaches to the unfinished tasks of its shard.
    Before a task starts (or continues) it re-lists the MCP servers whose tool lists changed."""

    def __init__(self, config: RuntimeConfig, instance: str, tool_specs: dict[str, Any],
                 tools: Sequence[Tool] = (), servers: Sequence[MCPServer] = (), shard: int = 0,
                 checks: Sequence[Check] = (), llm: LLM | None = None, profile: ModelProfile = HOSTED) -> None:
        # Peers are found by name (not passed as handles, which break restarts: ray-project/ray#53727);
        # every executor named for this instance counts, including ones added after start-up.
        dep = config.deployment

        def peers(role: str) -> list[Any]:
            return [ray.get_actor(n, namespace=dep.namespace)
                    for n in replica_names(role, instance, dep.role_replicas)]

        prefix = f"executor-{instance}-"
        names = sorted((a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                        if a["namespace"] == dep.namespace and a["name"].startswith(prefix)),
                       key=lambda n: int(n.removeprefix(prefix)))
        executors = [ray.get_actor(n, namespace=dep.namespace) for n in names]
        if dep.roles_in_shards:
            assert llm is not None, "roles_in_supervisors: create_actors passes the LLM"
            self._ray = ShardRolesRuntime(llm, tools, config, executors, tool_specs)
            self._ray.warm_up()
        else:
            self._ray = RayRuntime(peers("router"), peers("planner"), peers("reflector"), executors, tool_specs)
        super().__init__(Store(config.store_location(), pool_size=dep.store_pool_size), self._ray, config,
                         reattach_first=ray.get_runtime_context().was_current_actor_reconstructed,
                         owns=lambda task_id: shard_of(task_id, config.supervisors) == shard, checks=checks,
                         refresher=ToolRefresher(ToolCatalog(tools, servers), self._ray.use_tools) if servers else None,
                         lives_with_parent=True, profile=profile)
        self._driver_watch = DriverWatch(self._driver_lost).start()

    def _driver_lost(self) -> None:
        """(The watch's thread.) Fence out every task this Supervisor runs: their runners stop at their next
        write, and nothing new starts; a resume from a new driver continues them."""
        revoked = self._store.revoke_owner(self.lease_owner, DRIVER_LOST)
        log.warning("driver gone: revoked the leases of %d task(s)", len(revoked))

    async def tool_catalog(self) -> dict[str, Any]:
        """How often the tool list changed since start-up, and which MCP servers wait to be re-listed."""
        if self._refresher is None:
            return {"version": 0, "stale": []}
        catalog = self._refresher.catalog
        return {"version": catalog.version, "stale": [s.label for s in catalog.stale()]}

    async def tools_changed(self, server_key: str) -> None:
        """An executor saw this server's tool list change; it is re-listed before the next task."""
        from agents.tools.mcp.connection import note_tools_changed

        note_tools_changed(server_key)

    def add_executors(self, executors: list[Any]) -> int:
        """Grow the pool (the node watcher found a new node); returns the pool's new size."""
        self._ray.add_executors(executors)
        return self._ray.pool_size

    def executor_load(self) -> list[int]:
        return self._ray.executor_load()


def replica_names(role: str, instance: str, replicas: int) -> list[str]:
    """Actor names of a role's replicas: the first keeps the plain ``router-<id>`` name."""
    return [f"{role}-{instance}" if r == 0 else f"{role}-{instance}-{r}" for r in range(replicas)]
