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
import logging
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from agents.checks.api import Check
from agents.config import RuntimeConfig
from agents.engine.runtime import LocalRuntime
from agents.engine.supervisor import SupervisorCore
from agents.errors import InProcessRuntimeDiedError
from agents.llm.profile import profile_of
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

log = logging.getLogger("tetrarch")

_ALIVE_POLL_S = 0.25
"""How often a waiting caller looks whether the loop thread still runs: a dead loop answers nothing, and a wait
on it would outlast every timeout the caller gave."""


def build_local_runtime(config: RuntimeConfig, llm: LLM, tools: Sequence[Tool], journal: Any) -> LocalRuntime:
    """The four roles as plain objects, built from the same option slices the Ray actors get."""
    registry = ToolRegistry(tools)
    catalog = registry.catalog_text()
    executors = [Executor(list(registry), llm, config.executor_options(), name=f"executor-{i}", journal=journal)
                 for i in range(config.deployment.num_executors)]
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
        self._died: str | None = None
        """What stopped the loop, when something did (a BaseException that escaped from the code it ran)."""
        self._thread = threading.Thread(target=self._run_loop, name="tetrarch-inprocess", daemon=True)
        self._thread.start()
        self._closed = False
        try:
            self._core, self._journal_store = self._wait(self._submit_to_loop(
                self._build(config, llm, tools, servers, checks)))
        except BaseException:
            self._stop_loop()
            raise

    async def _build(self, config: RuntimeConfig, llm: LLM, tools: Sequence[Tool],
                     servers: Sequence[MCPServer], checks: Sequence[Check]) -> tuple[SupervisorCore, Store]:
        # Built on the loop: asyncio objects and the executors' MCP connections belong to the loop that uses them.
        journal_store = Store(config.store_location(), pool_size=config.deployment.store_pool_size)
        runtime = build_local_runtime(config, llm, tools, StoreJournal(journal_store))
        refresher = ToolRefresher(ToolCatalog(tools, servers), runtime.use_tools) if servers else None
        store = Store(config.store_location(), pool_size=config.deployment.store_pool_size)
        return SupervisorCore(store, runtime, config, checks=checks, refresher=refresher,
                              profile=profile_of(llm)), journal_store

    def _run_loop(self) -> None:
        # The user's checks and tools are isolated where they run; this names anything else that escapes, so every
        # caller hears it (InProcessRuntimeDiedError) instead of waiting on a loop that is gone.
        try:
            self._loop.run_forever()
        except BaseException as exc:  # noqa: BLE001 - the thread ends either way; its callers must learn why
            self._died = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            log.error("the in-process runtime's event loop stopped: %s", self._died)

    def _dead(self) -> InProcessRuntimeDiedError | None:
        if self._thread.is_alive():
            return None
        return InProcessRuntimeDiedError(self._died or "its event loop was stopped")

    def check_blocking(self) -> None:
        """Refuse a wait on the loop from the loop's own thread (a tool calling ``handle.result()``): it would wait
        for itself forever."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a blocking Orchestrator call was made from inside one of its own tools; use the "
                               "async API (handle.aresult(), handle.aevents()) there")

    def check_alive(self) -> None:
        """Raise ``InProcessRuntimeDiedError`` when the loop is gone: a submit queued for it would never start."""
        dead = self._dead()
        if dead is not None:
            raise dead

    def _submit_to_loop(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        dead = self._dead()
        if dead is not None:
            coro.close()
            raise dead
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _wait(self, future: concurrent.futures.Future[T]) -> T:
        while True:
            try:
                return future.result(timeout=_ALIVE_POLL_S)
            except concurrent.futures.TimeoutError:
                dead = self._dead()
                if dead is not None:
                    future.cancel()
                    raise dead from None

    def call(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        """Call a Supervisor method from synchronous code and wait for it (what ``ray.get(actor.m.remote())``
        does on Ray); the method's own exception is raised as it is."""
        self.check_blocking()
        return self._wait(self._submit_to_loop(getattr(self._core, method)(*args)))

    async def acall(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        """The same from a caller's event loop (``handle.aresult()``), without blocking it."""
        future = self._submit_to_loop(getattr(self._core, method)(*args))
        waiting = asyncio.wrap_future(future)
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=_ALIVE_POLL_S)
            if done:
                return waiting.result()
            dead = self._dead()
            if dead is not None:
                future.cancel()
                raise dead

    def shutdown(self) -> None:
        """Cancel the running tasks (they stay checkpointed as running, so ``resume`` continues them) and stop
        the loop."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._dead() is None:
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
