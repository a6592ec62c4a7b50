"""``Orchestrator(..., runtime="inprocess")``: every role and executor in the calling process, no Ray.

The same ``SupervisorCore`` the Ray Supervisor actor wraps runs on an event loop of its own (a daemon thread),
over ``LocalRuntime`` and the same store, so events, results, checkpoints, sessions and the policy are those of
a Ray run. The driver's calls (``call`` from synchronous code, ``acall`` from a caller's own event loop) cross
to that loop the way they would cross to the Supervisor actor, which keeps ``TaskHandle`` one class for both.

Example:
    >>> from agents.config import RuntimeConfig
    >>> sup = InProcessSupervisor(RuntimeConfig(store_path=tmp / "t.db"), llm, tools)   # doctest: +SKIP
    >>> task_id = sup.call("submit", "Which is bigger, Paris or Rome?", None, None)      # doctest: +SKIP
    >>> sup.shutdown()                                                                     # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from agents.checks.api import Check
from agents.config import RuntimeConfig
from agents.engine.runtime import LocalRuntime
from agents.engine.supervisor import SupervisorCore
from agents.llm.base import LLM
from agents.roles.executor import Executor
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.store import Store, StoreJournal
from agents.tools import Tool, ToolRegistry
from agents.tools.mcp import MCPServer, ToolCatalog, ToolRefresher

__all__ = ["InProcessSupervisor", "build_local_runtime"]

T = TypeVar("T")


def build_local_runtime(config: RuntimeConfig, llm: LLM, tools: Sequence[Tool], journal: Any) -> LocalRuntime:
    """The four roles as plain objects, built from the same option slices the Ray actors get."""
    registry = ToolRegistry(tools)
    catalog = registry.catalog_text()
    executors = [Executor(list(registry), llm, config.executor_options(), name=f"executor-{i}", journal=journal)
                 for i in range(config.num_executors)]
    return LocalRuntime(Router(llm, catalog, config.router_options()),
                        Planner(llm, registry.schemas(), catalog, config.planner_options()),
                        executors, Reflector(llm, config.prompt_options(), catalog),
                        {t.name: t.spec for t in registry})


class InProcessSupervisor:
    """Owns the loop thread, the store, the journal and the Supervisor core of one in-process Orchestrator."""

    def __init__(self, config: RuntimeConfig, llm: LLM, tools: Sequence[Tool],
                 servers: Sequence[MCPServer] = (), *, checks: Sequence[Check] = ()) -> None:
        config.store_path.parent.mkdir(parents=True, exist_ok=True)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tetrarch-inprocess", daemon=True)
        self._thread.start()
        self._closed = False
        try:
            self._core, self._journal_store = self._submit_to_loop(
                self._build(config, llm, tools, servers, checks)).result()
        except BaseException:
            self._stop_loop()
            raise

    async def _build(self, config: RuntimeConfig, llm: LLM, tools: Sequence[Tool],
                     servers: Sequence[MCPServer], checks: Sequence[Check]) -> tuple[SupervisorCore, Store]:
        # Built on the loop: asyncio objects and the executors' MCP connections belong to the loop that uses them.
        journal_store = Store(config.store_location(), pool_size=config.store_pool_size)
        runtime = build_local_runtime(config, llm, tools, StoreJournal(journal_store))
        refresher = ToolRefresher(ToolCatalog(tools, servers), runtime.use_tools) if servers else None
        store = Store(config.store_location(), pool_size=config.store_pool_size)
        return SupervisorCore(store, runtime, config, checks=checks, refresher=refresher), journal_store

    def _submit_to_loop(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        """Call a Supervisor method from synchronous code and wait for it (what ``ray.get(actor.m.remote())``
        does on Ray); the method's own exception is raised as it is."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a blocking Orchestrator call was made from inside one of its own tools; use the "
                               "async API (handle.aresult(), handle.aevents()) there")
        return self._submit_to_loop(getattr(self._core, method)(*args)).result()

    async def acall(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        """The same from a caller's event loop (``handle.aresult()``), without blocking it."""
        return await asyncio.wrap_future(self._submit_to_loop(getattr(self._core, method)(*args)))

    def shutdown(self) -> None:
        """Cancel the running tasks (they stay checkpointed as running, so ``resume`` continues them) and stop
        the loop."""
        if self._closed:
            return
        self._closed = True
        try:
            self._submit_to_loop(self._core.shutdown()).result(timeout=10)
        except Exception:  # noqa: BLE001 - the loop is stopped whatever the tasks did while being cancelled
            pass
        self._journal_store.close()
        self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()
