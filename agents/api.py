"""The public Python API: ``Orchestrator`` and ``TaskHandle`` (fixed by DESIGN.md).

Example:
    >>> from agents import Orchestrator, tool
    >>> from agents.llm import FunctionLLM
    >>> orch = Orchestrator(llm=FunctionLLM(my_script), tools=[lookup])       # doctest: +SKIP
    >>> handle = orch.submit("Which is bigger, Paris or Rome?")                # doctest: +SKIP
    >>> for ev in handle.events(): print(ev.type)                              # doctest: +SKIP
    >>> result = handle.result(timeout=120)                                    # doctest: +SKIP
    >>> orch.shutdown()                                                        # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Callable

from agents.config import RuntimeConfig, for_embedded_model
from agents.errors import (
    ClusterUnavailableError,
    ClusterVersionMismatchError,
    CodeShippingError,
    ConfigError,
    OrchestratorClosedError,
    TaskTimeoutError,
)
from agents.events import AnyEvent, parse_event
from agents.llm.base import LLM
from agents.memory.documents import DocumentIndex, DocumentInfo
from agents.memory.sessions import SessionStore
from agents.results import TaskResult
from agents.session import Session
from agents.task_text import check_task_text
from agents.tools import Tool, resolve_tools
from agents.tools.mcp import mcp_servers

__all__ = ["Orchestrator", "TaskHandle"]

log = logging.getLogger("tetrarch")

_POLL_S = 5.0

# Ray is one per process, shared by every Orchestrator in it. The one that started it must not shut it down
# under the others ("Can't find actor"): Ray is shut down when the last live Orchestrator of the process closes.
_live_orchestrators: set[str] = set()
_started_ray = False


def _ray():
    import ray

    return ray


def _unwrap(exc: BaseException) -> BaseException:
    """Ray wraps exceptions raised in actors; give the user the original typed error."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, Exception) else exc


class TaskHandle:
    """A submitted task. ``events()`` streams its typed events live; ``result()`` waits for its result."""

    def __init__(self, orchestrator: Orchestrator, task_id: str, run: int = 1) -> None:
        self._orch = orchestrator
        self.task_id = task_id
        self.run = run

    def __repr__(self) -> str:
        return f"TaskHandle(task_id={self.task_id!r}, run={self.run})"

    def _call(self, method: str, *args: Any) -> Any:
        self._orch._check()  # after shutdown() its actors are gone: say so, not Ray's ActorDiedError
        ray = _ray()
        try:
            return ray.get(getattr(self._orch._supervisor_for(self.task_id), method).remote(*args))
        except ray.exceptions.RayTaskError as exc:
            raise _unwrap(exc) from None

    async def _acall(self, method: str, *args: Any) -> Any:
        self._orch._check()
        ray = _ray()
        try:
            return await getattr(self._orch._supervisor_for(self.task_id), method).remote(*args)
        except ray.exceptions.RayTaskError as exc:
            raise _unwrap(exc) from None

    def events(self, after_seq: int = 0) -> Iterator[AnyEvent]:
        """Every event of this task from ``after_seq`` on, live, until this run's ``task_finished``."""
        seq = after_seq
        while True:
            batch = self._call("wait_events", self.task_id, seq, _POLL_S)
            for data in batch:
                event = parse_event(data)
                seq = event.seq
                yield event
                if event.type == "task_finished" and self._is_final(event):
                    return

    async def aevents(self, after_seq: int = 0) -> AsyncIterator[AnyEvent]:
        seq = after_seq
        while True:
            batch = await self._acall("wait_events", self.task_id, seq, _POLL_S)
            for data in batch:
                event = parse_event(data)
                seq = event.seq
                yield event
                if event.type == "task_finished" and self._is_final(event):
                    return

    def _is_final(self, event: AnyEvent) -> bool:
        # A task continued by respond()/resume() has several task_finished events; the handle of run N
        # stops at the first one that is not older than its own run.
        current = self._call("current_run", self.task_id)
        return current <= self.run or event.payload.status != "escalated"  # type: ignore[union-attr]

    def result(self, timeout: float | None = None) -> TaskResult:
        """Wait for the result. Never raises for a task that failed (see ``result.error``); raises
        ``TaskTimeoutError`` if ``timeout`` seconds pass first (the task keeps running)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            data = self._call("wait_result", self.task_id, self.run, wait)
            if data is not None:
                return TaskResult.model_validate(data)
            if deadline is not None and time.monotonic() >= deadline:
                raise TaskTimeoutError(f"task {self.task_id} did not finish within {timeout}s; it keeps running — "
                                       "call handle.result() again or orch.resume(task_id) later")

    async def aresult(self, timeout: float | None = None) -> TaskResult:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            data = await self._acall("wait_result", self.task_id, self.run, wait)
            if data is not None:
                return TaskResult.model_validate(data)
            if deadline is not None and time.monotonic() >= deadline:
                raise TaskTimeoutError(f"task {self.task_id} did not finish within {timeout}s")


class Orchestrator:
    """Runs tasks on local Ray (``address=None``) or a cluster (``"auto"``, ``"ray://host:10001"``).

    ``llm=None`` uses the embedded default: a local model behind llama.cpp's OpenAI-compatible server on
    127.0.0.1 (``tetrarch models pull`` installs it; ``RuntimeConfig(local_model=...)`` picks another one),
    stopped by ``shutdown()``. ``tools=None`` gives the built-in tools.
    """

    def __init__(self, llm: LLM | None = None, tools: Sequence[Tool | Callable[..., Any]] | None = None,
                 config: RuntimeConfig | None = None, address: str | None = None) -> None:
        self.config = config or RuntimeConfig()
        if not isinstance(self.config, RuntimeConfig):
            raise ConfigError(f"config must be a RuntimeConfig, not {type(self.config).__name__}")
        log.setLevel(self.config.log_level)
        self._closed = False
        self._local_server = None
        if llm is not None and not isinstance(llm, LLM):
            raise ConfigError(f"llm must be an LLM (an object with async complete(request) and stream(request)), not "
                              f"{type(llm).__name__} {llm!r}; for a model name use "
                              "OpenAIChat(model=..., base_url=...), or llm=None for the embedded local model")
        self.tools = self._resolve_tools(tools)
        if llm is None:
            self.config = for_embedded_model(self.config)
        self.llm = llm if llm is not None else self._start_embedded_llm()
        # The embedded model prefills its prompts while Ray starts: one waits on the CPU, the other mostly not.
        warming = self._warm_embedded_llm(self.llm) if llm is None else None
        self._instance = uuid.uuid4().hex[:8]
        self._watcher = None
        self._connect(address)
        _live_orchestrators.add(self._instance)
        from agents.cluster.actors import ExecutorFactory, create_actors

        self._factory = ExecutorFactory(self.config, self.llm, self.tools, self._instance)
        try:
            self._actors = create_actors(self.config, self.llm, self.tools, self._instance, self._factory,
                                         servers=mcp_servers(tools))  # re-listed when their tool lists change
        except BaseException:
            _live_orchestrators.discard(self._instance)
            raise
        finally:
            if warming is not None:
                warming.join()
        self._supervisor = self._actors.supervisor
        if self.config.executors_per_node is not None and self.config.watch_nodes:
            self._start_watcher()

    # ------------------------------------------------------------------ setup
    def _resolve_tools(self, tools: Sequence[Tool | Callable[..., Any]] | None) -> list[Tool]:
        if tools is None:
            from agents.tools.builtins import builtin_tools

            workspace = self.config.workspace_dir or self.config.store_path.parent / "workspace"
            return list(builtin_tools(workspace))
        return resolve_tools(tools)  # Tool objects, plain functions (@tool defaults) and MCP servers (listed now)

    def _start_embedded_llm(self) -> LLM:
        from agents.llm.local import start_local_llm

        llm, server = start_local_llm(self.config.local_model)
        self._local_server = server
        return llm

    def _warm_embedded_llm(self, llm: LLM) -> threading.Thread:
        """Start prefilling each role's static prompt (``agents.llm.local.warm``) on a thread; a task's first
        calls would only queue behind it at the server, so the caller joins it before taking tasks."""
        from agents.llm.local.warm import role_prefixes, warm_prefixes
        from agents.tools import ToolRegistry

        prefixes = role_prefixes(self.config.prompt_options(), ToolRegistry(self.tools).catalog_text(),
                                 self.config.max_steps)

        def warm() -> None:
            took = warm_prefixes(llm, prefixes)
            if took is not None:
                log.info("the embedded model prefilled %d roles' static prompts in %.1fs", len(prefixes), took)

        thread = threading.Thread(target=warm, name="tetrarch-warm-up", daemon=True)
        thread.start()
        return thread

    def _connect(self, address: str | None) -> None:
        ray = _ray()
        # None means a private local Ray (DESIGN.md). Plain ray.init() would instead join any cluster named by
        # RAY_ADDRESS or by /tmp/ray/ray_current_cluster (left by `ray start` or ray.cluster_utils.Cluster on
        # this machine). RAY_ADDRESS is honoured: `ray job submit` sets it for the driver it starts.
        if address is None:
            address = os.environ.get("RAY_ADDRESS") or None
        ship = self.config.ship_code if self.config.ship_code is not None else address is not None
        if ray.is_initialized():
            if ship and address is not None:
                # Ray takes local code paths only at ray.init (job level), which has happened already.
                log.warning("Ray was initialized before this Orchestrator, so its code cannot be shipped to the "
                            "cluster now; pass runtime_env=agents.cluster.deploy.build_runtime_env(tools, llm) to your "
                            "ray.init, or install tetrarch and your tools on every node")
            return
        kwargs: dict[str, Any] = {"namespace": self.config.namespace, "log_to_driver": False,
                                  "configure_logging": True,
                                  "logging_level": getattr(logging, self.config.log_level)}
        kwargs.update(self.config.ray_init_kwargs)
        if address is None and self.config.local_ray_system_config:
            # Only a Ray this Orchestrator starts takes _system_config (joining a cluster refuses it); the
            # caller's own entries win.
            mine = self.config.ray_init_kwargs.get("_system_config") or {}
            kwargs["_system_config"] = {**self.config.local_ray_system_config, **mine}  # type: ignore[dict-item]
        if ship:
            from agents.cluster.deploy import build_runtime_env, merge_runtime_env

            shipped = build_runtime_env(self.tools, self.llm, self.config.runtime_env)
            kwargs["runtime_env"] = merge_runtime_env(kwargs.get("runtime_env"), shipped)  # type: ignore[arg-type]
        elif self.config.runtime_env:
            kwargs["runtime_env"] = dict(self.config.runtime_env)
        try:
            ray.init(address=address or "local", **kwargs)
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
                "RuntimeConfig(ship_code=False)") from exc
        global _started_ray
        _started_ray = True

    def _start_watcher(self) -> None:
        from agents.cluster.actors import cluster_nodes
        from agents.cluster.node_watch import NodeWatcher

        self._watcher = NodeWatcher(self.config, self._factory, self._actors.supervisors,
                                    home=_ray().get_runtime_context().get_node_id(),
                                    placed=self._actors.executor_nodes, list_nodes=cluster_nodes)
        self._watcher.start()

    def _supervisor_for(self, task_id: str) -> Any:
        """The Supervisor shard that owns ``task_id`` (``agents.cluster.shards``: its id's hash mod N)."""
        from agents.cluster.shards import shard_of

        return self._actors.supervisors[shard_of(task_id, len(self._actors.supervisors))]

    def _check(self) -> None:
        if self._closed:
            raise OrchestratorClosedError()

    # ------------------------------------------------------------------ API
    def submit(self, task: str) -> TaskHandle:
        """Start a task; returns at once."""
        return self._submit(task)

    def _submit(self, task: str, session_id: str | None = None) -> TaskHandle:
        self._check()
        check_task_text(task, self.config.context_token_budget)
        task_id = uuid.uuid4().hex[:16]
        ray = _ray()
        try:
            ray.get(self._supervisor_for(task_id).submit.remote(task, task_id, session_id))
        except ray.exceptions.RayTaskError as exc:  # e.g. SessionNotFoundError: the user's own typed error
            raise _unwrap(exc) from None
        return TaskHandle(self, task_id, 1)

    def session(self, session_id: str | None = None) -> Session:
        """A conversation: each ``s.run(text)`` / ``s.submit(text)`` is an ordinary task that also sees the
        earlier turns (within ``RuntimeConfig.session_history_tokens``). ``session_id`` continues a session
        kept in this store (``SessionNotFoundError`` if there is none), also from another process.

        Example:
            >>> s = orch.session()                                          # doctest: +SKIP
            >>> s.run("Population of Paris?"); s.run("And Rome? Which is bigger?")   # doctest: +SKIP
            >>> orch2.session(s.id).turns()[-1].answer                      # doctest: +SKIP
        """
        self._check()
        store = SessionStore(self.config.store_location())
        try:
            info = store.create() if session_id is None else store.get(session_id)
        finally:
            store.close()
        return Session(self._submit, self.config.store_location(), info.session_id)

    def run(self, task: str, timeout: float | None = None) -> TaskResult:
        """``submit(task).result(timeout)``."""
        return self.submit(task).result(timeout=timeout)

    def respond(self, task_id: str, text: str) -> TaskHandle:
        """Answer an escalation or a confirmation request ("approve" runs the pending tool call); the task
        continues and the returned handle follows it."""
        self._check()
        run = TaskHandle(self, task_id)._call("respond", task_id, text)
        return TaskHandle(self, task_id, run)

    def resume(self, task_id: str) -> TaskHandle:
        """Continue an unfinished task from its last checkpoint (e.g. after the driver was killed)."""
        self._check()
        run = TaskHandle(self, task_id)._call("resume", task_id)
        return TaskHandle(self, task_id, run)

    def handle(self, task_id: str) -> TaskHandle:
        """A handle for a task submitted earlier (by this or another process sharing the store)."""
        self._check()
        run = TaskHandle(self, task_id)._call("current_run", task_id)
        return TaskHandle(self, task_id, run)

    def add_documents(self, items: Sequence[str | os.PathLike[str]]) -> list[DocumentInfo]:
        """Index the user's own documents (file paths, or texts) so the built-in ``doc_search`` finds them
        beside its shipped corpus: SQLite FTS5 with bm25 ranking, in this Orchestrator's store. Adding a source
        again replaces its chunks; the next search sees the change.

        Example:
            >>> orch.add_documents(["notes/offices.md", "Our Paris office opened in 2019."])  # doctest: +SKIP
            [DocumentInfo(doc_id='doc-…', source='notes/offices.md', …), …]
        """
        self._check()
        index = DocumentIndex(self.config.store_path)
        try:
            return index.add(items)
        finally:
            index.close()

    def remove_document(self, doc_id: str) -> None:
        """Forget one of the user's documents (``DocumentInfo.doc_id``); searches stop finding it at once."""
        self._check()
        index = DocumentIndex(self.config.store_path)
        try:
            index.remove(doc_id)
        finally:
            index.close()

    def shutdown(self) -> None:
        """Stop this Orchestrator's actors (and the embedded model server). Unfinished tasks stay
        checkpointed and can be resumed by a new Orchestrator."""
        if self._closed:
            return
        self._closed = True
        ray = _ray()
        try:
            ray.get([s.shutdown.remote() for s in self._actors.supervisors], timeout=10)
        except Exception:  # noqa: BLE001 - shutting down a broken cluster must still release the rest
            pass
        if self._watcher is not None:
            self._watcher.stop()
        from agents.cluster.actors import kill_actors

        kill_actors(self._actors)
        for handle in self._factory.started[len(self._actors.executors):]:  # added when nodes joined
            try:
                ray.kill(handle, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        if self._local_server is not None:
            self._local_server.stop()
        _live_orchestrators.discard(self._instance)
        global _started_ray
        if _started_ray and not _live_orchestrators:
            _started_ray = False
            ray.shutdown()

    def __enter__(self) -> Orchestrator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
