"""The public Python API: ``Orchestrator`` (and ``TaskHandle``, from ``agents.handle``).

Example:
    >>> from agents import Orchestrator, tool
    >>> from agents.llm import FunctionLLM
    >>> orch = Orchestrator(llm=FunctionLLM(my_script), tools=[lookup])       # doctest: +SKIP
    >>> handle = orch.submit("Which is bigger, Paris or Rome?")                # doctest: +SKIP
    >>> for ev in handle.events(): print(ev.type)                              # doctest: +SKIP
    >>> result = handle.result(timeout=120)                                    # doctest: +SKIP
    >>> orch.shutdown()                                                        # doctest: +SKIP

``runtime="ray"`` (the default) runs the Supervisor shards and the executors as Ray actors, the roles inside the
shards unless they are given replicas or resources (``agents.cluster.driver``, imported only then);
``runtime="inprocess"`` runs every role and executor in this process (``agents.engine.inprocess``) with the same
events, results, store and policy, for users' tests and notebooks. Both answer the same Supervisor calls.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Literal, Protocol, get_args

from agents.handle import TaskHandle, _deadline, _who
from agents.checks.api import Check
from agents.checks.runner import validate_checks
from agents.config import RuntimeConfig
from agents.errors import ConfigError, InvalidResponseError, OrchestratorClosedError
from agents.llm.base import LLM
from agents.llm.local.catalog import LocalModel
from agents.memory.documents import DocumentIndex, DocumentInfo
from agents.memory.sessions import SessionStore
from agents.outputs import output_spec
from agents.results import CancelOutcome, TaskResult
from agents.session import Session
from agents.result_reads import ResultReads
from agents.submits import submit_queue
from agents.task_text import check_task_text, check_text_length
from agents.tools import Tool, resolve_tools
from agents.tools.mcp import mcp_servers

__all__ = ["Orchestrator", "RuntimeName", "TaskHandle"]

log = logging.getLogger("tetrarch")

RuntimeName = Literal["ray", "inprocess"]
"""Where an Orchestrator runs its roles: Ray actors (local Ray or a cluster), or this process."""


class _Supervisor(Protocol):
    """The Supervisor's calls as the driver makes them: ``agents.cluster.driver.RaySupervisor`` (an actor) or
    ``agents.engine.inprocess.InProcessSupervisor`` (this process). Both raise the Supervisor's own typed errors."""

    def call(self, method: str, *args: Any, task_id: str | None = None) -> Any:
        """``task_id`` names the task the call is about: with several Supervisor shards, its shard answers."""
        ...

    async def acall(self, method: str, *args: Any, task_id: str | None = None) -> Any: ...

    def shutdown(self) -> None: ...


class Orchestrator:
    """Runs tasks on local Ray (``address=None``), a cluster (``"auto"``, ``"ray://host:10001"``), or with
    ``runtime="inprocess"`` in this process without Ray.

    ``llm=None`` uses the embedded default: a local model behind llama.cpp's OpenAI-compatible server on
    127.0.0.1 (``tetrarch models pull`` installs it; ``llm=get_model(name)`` from ``agents.llm.local`` serves
    another installed one),
    stopped by ``shutdown()``. ``tools=None`` gives the built-in tools. ``checks`` are the user's answer checks
    (``agents.checks``): each runs on every accept before it counts, and a ``Reject`` it raises refuses the answer.
    """

    def __init__(self, llm: LLM | LocalModel | None = None, tools: Sequence[Tool | Callable[..., Any]] | None = None,
                 config: RuntimeConfig | None = None, address: str | None = None, *,
                 runtime: RuntimeName = "ray", checks: Sequence[Check] | None = None) -> None:
        self.config = config or RuntimeConfig()
        if not isinstance(self.config, RuntimeConfig):
            raise ConfigError(f"config must be a RuntimeConfig, not {type(self.config).__name__}")
        _check_runtime(runtime, address)
        try:
            self.checks = validate_checks(checks)
        except TypeError as exc:
            raise ConfigError(str(exc)) from None
        log.setLevel(self.config.observability.log_level)
        self.runtime: RuntimeName = runtime
        self._closed = False
        self._local_server = None
        embedded = llm is None or isinstance(llm, LocalModel)
        if not embedded and not isinstance(llm, LLM):
            raise ConfigError(f"llm must be an LLM (an object with async complete(request) and stream(request)), not "
                              f"{type(llm).__name__} {llm!r}; for a model name use "
                              "OpenAIChat(model=..., base_url=...), or llm=None for the embedded local model")
        self.tools = self._resolve_tools(tools)
        self.llm: LLM = self._start_embedded_llm(llm) if embedded else llm  # type: ignore[assignment]
        # The embedded model loads and prefills its prompts while the rest starts: one waits on the CPU, the other
        # mostly not. A warm start finds the prefills on disk (agents/llm/local/_state_shelf.py) and reads nothing.
        warming = self._warm_embedded_llm(self.llm) if embedded else None
        self._instance = uuid.uuid4().hex[:8]
        try:
            self._backend: _Supervisor = self._start_backend(address, mcp_servers(tools))
            self._submits = submit_queue(self._backend, self.config.supervisors)
            self._reads = ResultReads(lambda task_id, *args: self._backend.call("wait_results", task_id, *args,
                                                                                 task_id=task_id))
            if warming is not None:
                try:
                    warming.join()  # raises what kept the model server from starting
                except BaseException:
                    self._backend.shutdown()
                    raise
        except BaseException:
            if self._local_server is not None:
                self._local_server.stop()
            raise

    # ------------------------------------------------------------------ setup
    def _start_backend(self, address: str | None, servers: Sequence[Any]) -> _Supervisor:
        if self.runtime == "inprocess":
            from agents.engine.inprocess import InProcessSupervisor

            return InProcessSupervisor(self.config, self.llm, self.tools, servers, checks=self.checks)
        from agents.cluster.driver import RaySupervisor

        backend = RaySupervisor(self.config, self.llm, self.tools, self._instance, address, servers,
                                checks=self.checks)
        # The actors, for tests and benchmarks that reach into a Ray run (kill one, read its load).
        self._actors, self._supervisor = backend.actors, backend.actors.supervisor
        self._factory, self._watcher = backend.factory, backend.watcher
        return backend

    def _resolve_tools(self, tools: Sequence[Tool | Callable[..., Any]] | None) -> list[Tool]:
        if tools is None:
            from agents.tools.builtins import builtin_tools

            workspace = self.config.workspace_dir or self.config.store_path.parent / "workspace"
            try:
                return list(builtin_tools(workspace))
            except OSError as exc:  # name the path the user chose, not only the directory made from it
                raise workspace_error(self.config, workspace, exc) from None
        return resolve_tools(tools)  # Tool objects, plain functions (@tool defaults) and MCP servers (listed now)

    def _start_embedded_llm(self, model: LocalModel | None) -> LLM:
        from agents.llm.local import start_local_llm

        llm, server = start_local_llm(model.name if model is not None else None, wait=False)  # _warm_embedded_llm waits for it
        self._local_server = server
        return llm

    def _warm_embedded_llm(self, llm: LLM) -> Any:
        from agents.llm.local.warm import start_warming
        from agents.tools import ToolRegistry

        ready = self._local_server.wait_ready if self._local_server is not None else None
        return start_warming(llm, ToolRegistry(self.tools).catalog_text(),
                             self.config.max_steps, ready=ready)

    def _supervisor_for(self, task_id: str) -> Any:
        """The Supervisor shard that owns ``task_id`` (``agents.cluster.shards``: its id's hash mod N)."""
        from agents.cluster.shards import shard_of

        return self._actors.supervisors[shard_of(task_id, len(self._actors.supervisors))]

    def _check(self) -> None:
        if self._closed:
            raise OrchestratorClosedError()

    # ------------------------------------------------------------------ API
    def submit(self, task: str, *, output_type: Any = None) -> TaskHandle:
        """Start a task; returns at once. ``output_type``: the type ``result.output`` is validated as (a pydantic
        model, a dataclass, a TypedDict, ``int``, ``list[str]``...; ``agents.outputs``)."""
        return self._submit(task, output_type=output_type)

    def _submit(self, task: str, session_id: str | None = None, output_type: Any = None) -> TaskHandle:
        self._check()
        check_task_text(task, self.config.context_token_budget)
        # On Ray the Supervisor and the reviewer rebuild the type by its import path: refused here if they cannot.
        spec = None if output_type is None else output_spec(output_type, importable=self.runtime == "ray")
        task_id = uuid.uuid4().hex[:16]
        if session_id is None:  # queued: no round trip per task (agents.submits)
            self._reads.submitted(task_id)
            return TaskHandle(self, task_id, 1, output_type, submitted=self._submits.put(task, task_id, spec))
        # raises e.g. SessionNotFoundError as it is
        self._backend.call("submit", task, task_id, session_id, spec, task_id=task_id)
        return TaskHandle(self, task_id, 1, output_type)

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

    def run(self, task: str, timeout: float | None = None, *, output_type: Any = None) -> TaskResult:
        """``submit(task, output_type=...).result(timeout)``."""
        _deadline(timeout)  # a timeout that is not seconds is refused before the task starts
        return self.submit(task, output_type=output_type).result(timeout=timeout)

    def respond(self, task_id: str, text: str, *, by: str | None = None) -> TaskHandle:
        """Answer an escalation or a confirmation request ("approve" runs the pending tool call); the task
        continues and the returned handle follows it. ``by`` names who answered in the event log (default "api")."""
        self._check()
        if not isinstance(text, str):  # checked here, the one door every path (API, MCP, HTTP) answers through
            raise InvalidResponseError("the answer", text)
        if by is not None and not isinstance(by, str):
            raise InvalidResponseError("by=", by)
        check_text_length(text, "response")  # here, before a huge text is shipped to the Supervisor
        run = TaskHandle(self, task_id)._call("respond", task_id, text, by)
        return TaskHandle(self, task_id, run)

    def resume(self, task_id: str, *, force: bool = False) -> TaskHandle:
        """Continue an unfinished task from its last checkpoint (e.g. after the driver was killed). A task still
        running in another live Orchestrator raises ``TaskLeaseHeldError`` (saying until when its lease is live);
        ``force=True`` takes it over anyway (its step in flight may then run twice)."""
        self._check()
        run = TaskHandle(self, task_id)._call("resume", task_id, bool(force))
        return TaskHandle(self, task_id, run)

    def cancel(self, task_id: str, *, by: str | None = None) -> CancelOutcome:
        """Stop a running task now (its model calls and tools too; also one another process runs): it ends
        "cancelled" (``result.cancelled_by``: ``by``, default "the API") keeping its completed steps for
        ``resume``. Nothing to cancel (finished, cancelled): ``CancelOutcome.message`` says so."""
        self._check()
        data = TaskHandle(self, task_id)._call("cancel", task_id, _who(by))
        return CancelOutcome.model_validate(data)

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
        """Stop this Orchestrator's roles (and the embedded model server). Unfinished tasks stay checkpointed
        and can be resumed by a new Orchestrator."""
        if self._closed:
            return
        self._closed = True
        try:
            self._submits.close()  # what was submitted reaches the Supervisor before it stops
            self._backend.shutdown()
        finally:
            if self._local_server is not None:
                self._local_server.stop()

    def __enter__(self) -> Orchestrator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _check_runtime(runtime: object, address: str | None) -> None:
    if runtime not in get_args(RuntimeName):
        raise ConfigError(f"runtime must be one of {', '.join(map(repr, get_args(RuntimeName)))}, not {runtime!r}")
    if runtime == "inprocess" and address is not None:
        raise ConfigError(f"runtime='inprocess' runs everything in this process and joins no cluster; drop "
                          f"address={address!r}, or use runtime='ray' to run on the cluster")


def workspace_error(config: RuntimeConfig, workspace: Path, exc: OSError) -> ConfigError:
    """The file tools' workspace could not be made: say which setting of the user's it came from, and why."""
    why = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError) and workspace.parent.is_dir():
        # /proc/workspace: the directory exists but takes no new entries; "no such file" alone misleads.
        why = f"the directory {workspace.parent} does not let anything be created in it ({why})"
    if config.workspace_dir is not None:
        return ConfigError(f"cannot create RuntimeConfig.workspace_dir {workspace}: {why}; pick a directory you can "
                           "write to")
    return ConfigError(f"cannot use store_path {config.store_path}: the file tools' workspace beside it, {workspace}, "
                       f"cannot be created: {why}; point store_path at a file in a directory you can write to, or "
                       "set RuntimeConfig.workspace_dir")
