"""The driver's side of a Ray Orchestrator: starting or joining Ray, the actors, the node watcher, and the calls
to the Supervisor actor. ``agents.api`` imports this module only when an Orchestrator runs on Ray, so importing
``agents`` (and ``runtime="inprocess"``) never imports Ray.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import ray

from agents.llm.profile import profile_of
from agents.cluster.actor_set import ExecutorFactory, cluster_nodes, create_actors, kill_actors
from agents.cluster.node_watch import NodeWatcher
from agents.cluster.shards import shard_of
from agents.checks.api import Check
from agents.config import RuntimeConfig
from agents.errors import ClusterUnavailableError, ClusterVersionMismatchError, CodeShippingError
from agents.llm.base import LLM
from agents.tools import Tool
from agents.tools.mcp import MCPServer

__all__ = ["RaySupervisor", "connect"]

log = logging.getLogger("tetrarch")

# Ray is one per process, shared by every Orchestrator in it. The one that started it must not shut it down
# under the others ("Can't find actor"): Ray is shut down when the last live Orchestrator of the process closes.
_live: set[str] = set()
_started_ray = False


def _unwrap(exc: BaseException) -> BaseException:
    """Ray wraps exceptions raised in actors; give the user the original typed error."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, Exception) else exc


def _init_kwargs(config: RuntimeConfig, address: str | None, ship: bool, tools: Sequence[Tool],
                 llm: LLM) -> dict[str, Any]:
    dep = config.deployment
    kwargs: dict[str, Any] = {"namespace": dep.namespace, "log_to_driver": False, "configure_logging": True,
                              "logging_level": getattr(logging, config.observability.log_level)}
    kwargs.update(dep.ray_init_kwargs)
    quiet = profile_of(llm).local_ray_system_config
    if address is None and quiet:
        # Only a Ray this Orchestrator starts takes _system_config (joining a cluster refuses it); the caller's
        # own entries win. A model whose server shares these cores asks for a quieter Ray (its profile).
        mine = dep.ray_init_kwargs.get("_system_config") or {}
        kwargs["_system_config"] = {**quiet, **mine}
    if ship:
        from agents.cluster.deploy import build_runtime_env, merge_runtime_env

        shipped = build_runtime_env(tools, llm, dep.runtime_env)
        kwargs["runtime_env"] = merge_runtime_env(kwargs.get("runtime_env"), shipped)
    elif dep.runtime_env:
        kwargs["runtime_env"] = dict(dep.runtime_env)
    return kwargs


def connect(config: RuntimeConfig, address: str | None, tools: Sequence[Tool], llm: LLM) -> None:
    """Start a private local Ray (``address=None``) or join the cluster at ``address``; a Ray already
    initialised in this process is used as it is."""
    # None means a private local Ray. Plain ray.init() would instead join any cluster named by RAY_ADDRESS or by
    # /tmp/ray/ray_current_cluster (left by `ray start` or ray.cluster_utils.Cluster on this machine).
    # RAY_ADDRESS is honoured: `ray job submit` sets it for the driver it starts.
    if address is None:
        address = os.environ.get("RAY_ADDRESS") or None
    ship = address is not None if config.deployment.ship_code is None else config.deployment.ship_code
    if ray.is_initialized():
        if ship and address is not None:
            # Ray takes local code paths only at ray.init (job level), which has happened already.
            log.warning("Ray was initialized before this Orchestrator, so its code cannot be shipped to the "
                        "cluster now; pass runtime_env=agents.cluster.deploy.build_runtime_env(tools, llm) to your "
                        "ray.init, or install tetrarch and your tools on every node")
        return
    kwargs = _init_kwargs(config, address, ship, tools, llm)
    try:
        _init_ray(address, kwargs)
    except ConnectionError as exc:
        raise ClusterUnavailableError(
            f"could not reach a Ray cluster at {address!r}: {exc}. Start one with `ray start --head` or pass "
            "address=None for a local Ray") from exc
    except RuntimeError as exc:
        if "version" in str(exc).lower():
            raise ClusterVersionMismatchError(
                f"the cluster at {address!r} runs another Ray/Python version: {exc}. Install the same versions "
                "on the driver and the cluster") from exc
        raise ClusterUnavailableError(f"could not start or reach Ray ({address!r}): {exc}") from exc
    except (ray.exceptions.RuntimeEnvSetupError, OSError, ValueError, TypeError) as exc:
        if not ship:
            raise
        raise CodeShippingError(
            f"could not ship the code to the cluster at {address!r} ({type(exc).__name__}: {exc}). Fix the "
            "path it names, or install tetrarch and your tool modules on every node and pass "
            "RuntimeConfig(deployment=Deployment(ship_code=False))") from exc
    global _started_ray
    _started_ray = True


_LOCAL_START_ATTEMPTS = 2
_LATE_START = "timed out during startup"


def _init_ray(address: str | None, kwargs: dict[str, Any]) -> None:
    """``ray.init``, with a private local Ray started once more when its node missed its start-up window: the
    raylet gives its helper processes a fixed ~15 s to report their ports, and on a busy two-core machine (the
    embedded model loading beside it) a cold first import of the helper can take longer. The second start finds
    the imports in the page cache."""
    for attempt in range(1, _LOCAL_START_ATTEMPTS + 1):
        try:
            ray.init(address=address or "local", **kwargs)
            return
        except Exception as exc:  # Ray raises a bare Exception for a node that did not start in time
            if address is not None or attempt == _LOCAL_START_ATTEMPTS or _LATE_START not in str(exc):
                raise
            log.warning("the local Ray node did not start in time (%s); starting it once more", exc)
            ray.shutdown()


class RaySupervisor:
    """One Orchestrator's actors on Ray and the calls to its Supervisor actor (``call`` / ``acall``, with Ray's
    wrapping of the actor's exception taken off)."""

    def __init__(self, config: RuntimeConfig, llm: LLM, tools: Sequence[Tool], instance: str,
                 address: str | None, servers: Sequence[MCPServer] = (), *, checks: Sequence[Check] = ()) -> None:
        connect(config, address, tools, llm)
        self._instance = instance
        _live.add(instance)
        self._factory = ExecutorFactory(config, llm, tools, instance)
        self._watcher: NodeWatcher | None = None
        try:
            # MCP servers are passed so they are re-listed when their tool lists change.
            self._actors = create_actors(config, llm, tools, instance, self._factory, servers=servers, checks=checks)
        except BaseException:
            _live.discard(instance)
            raise
        try:
            # The shards answer before the Orchestrator is handed out: submits are queued, not waited for
            # (agents.submits), so a shard that cannot start says so here, and the first submit's task does not
            # wait on the shard's start-up behind the caller's back.
            ray.get([s.pid.remote() for s in self._actors.supervisors])
        except BaseException as exc:
            kill_actors(self._actors)
            _live.discard(instance)
            raise _unwrap(exc) from None
        self._supervisor = self._actors.supervisor
        if config.deployment.executors_per_node is not None and config.deployment.watch_nodes:
            self._watcher = NodeWatcher(config, self._factory, self._actors.supervisors,
                                        home=ray.get_runtime_context().get_node_id(),
                                        placed=self._actors.executor_nodes, list_nodes=cluster_nodes)
            self._watcher.start()

    @property
    def actors(self) -> Any:
        """The ``ActorSet`` (tests and benchmarks reach individual actors through it)."""
        return self._actors

    @property
    def factory(self) -> ExecutorFactory:
        return self._factory

    @property
    def watcher(self) -> NodeWatcher | None:
        return self._watcher

    def _shard(self, task_id: str | None) -> Any:
        """The Supervisor shard that owns ``task_id`` (``agents.cluster.shards``: its id's hash mod N)."""
        shards = self._actors.supervisors
        return shards[0] if task_id is None else shards[shard_of(task_id, len(shards))]

    def call(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        try:
            return ray.get(getattr(self._shard(task_id), method).remote(*args))
        except ray.exceptions.RayTaskError as exc:
            raise _unwrap(exc) from None

    async def acall(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        try:
            return await getattr(self._shard(task_id), method).remote(*args)
        except ray.exceptions.RayTaskError as exc:
            raise _unwrap(exc) from None

    def shutdown(self) -> None:
        try:
            ray.get([s.shutdown.remote() for s in self._actors.supervisors], timeout=10)
        except Exception:  # noqa: BLE001 - shutting down a broken cluster must still release the rest
            pass
        if self._watcher is not None:
            self._watcher.stop()
        kill_actors(self._actors)
        for handle in self._factory.started[len(self._actors.executors):]:  # added when nodes joined
            try:
                ray.kill(handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        _live.discard(self._instance)
        global _started_ray
        if _started_ray and not _live:
            _started_ray = False
            ray.shutdown()
