"""The executor pool grows when nodes join: a thread in the driver polls the cluster's nodes and starts
``executors_per_node`` executors on every new worker node, then hands them to the Supervisor.

Why a driver thread and not an actor: Ray ties an actor's lifetime to its owner, the process that created
it. Every other actor of an Orchestrator is owned by the driver; executors created by a watcher actor would
die whenever that actor restarted. In the driver they live exactly as long as the Orchestrator.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents.cluster.placement import NodeView, plan_executors
from agents.config import RuntimeConfig

__all__ = ["NodeWatcher", "PoolGrowth"]

log = logging.getLogger("tetrarch.cluster")

_READY_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class PoolGrowth:
    """One growth of the pool: when, which node, how many executors, the pool size after."""

    at: float
    node_id: str
    started: int
    pool_size: int


class NodeWatcher:
    def __init__(self, config: RuntimeConfig, factory: Any, supervisor: Any, home: str,
                 placed: Sequence[str | None], list_nodes: Callable[[], list[NodeView]],
                 clock: Callable[[], float] = time.time, ray_api: Any = None) -> None:
        assert config.deployment.executors_per_node is not None
        self._dep, self._factory, self._supervisor, self._home = config.deployment, factory, supervisor, home
        self._list_nodes, self._clock = list_nodes, clock
        if ray_api is None:
            import ray as ray_api
        self._ray = ray_api
        """``wait``/``get``/``kill`` of Ray (injected: the unit tests run the watcher without a cluster)."""
        self._counts: dict[str, int] = {}
        for node in placed:
            if node is not None:
                self._counts[node] = self._counts.get(node, 0) + 1
        self.history: list[PoolGrowth] = []
        self.errors = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self) -> list[PoolGrowth]:
        """Start executors on worker nodes that have fewer than ``executors_per_node``; returns what grew."""
        ray = self._ray
        nodes = self._list_nodes()
        plan = plan_executors(nodes, self._home, self._dep.role_resources.get("executor", {}),
                              self._dep.executors_per_node or 0, self._counts)
        if not plan:
            return []
        handles = self._factory.start(plan)
        pings = {h.ping.remote(): (h, node) for h, node in zip(handles, plan)}
        ready, pending = ray.wait(list(pings), num_returns=len(pings), timeout=_READY_TIMEOUT_S)
        for ref in pending:
            # Not added: the Supervisor would queue steps on an executor that may never start (its node died
            # while it started). Killing it frees its resources; the node is planned again on the next poll.
            handle, node = pings[ref]
            log.warning("an executor for node %s did not start within %.0fs; dropped", node, _READY_TIMEOUT_S)
            ray.kill(handle, no_restart=True)
        placed = [pings[ref] for ref in ready]
        if not placed:
            return []
        shards = self._supervisor if isinstance(self._supervisor, list) else [self._supervisor]
        # Every Supervisor shard dispatches to the whole pool.
        pool = ray.get([s.add_executors.remote([h for h, _ in placed]) for s in shards])[0]
        grown = []
        for node in dict.fromkeys(n for _, n in placed):
            count = sum(1 for _, n in placed if n == node)
            self._counts[node] = self._counts.get(node, 0) + count
            growth = PoolGrowth(at=self._clock(), node_id=node, started=count, pool_size=pool)
            grown.append(growth)
            log.info("node %s joined: started %d executor(s) there; executor pool is now %d",
                     node[:12], count, pool)
        self.history.extend(grown)
        return grown

    # ------------------------------------------------------------------ thread
    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="tetrarch-node-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=_READY_TIMEOUT_S + 5)

    def _loop(self) -> None:
        while not self._stop.wait(self._dep.node_watch_interval_s):
            try:
                self.poll_once()
            except Exception:
                self.errors += 1
                log.exception("node watcher: poll failed; trying again in %.1fs",
                              self._dep.node_watch_interval_s)
