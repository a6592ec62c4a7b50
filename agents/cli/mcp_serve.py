"""tetrarch as an MCP server: any MCP client hands a complex task to tetrarch (``tetrarch mcp serve``).

Tools: ``run_task`` (task text in; answer, status, task id and a short plan summary out; a progress
notification per task event while it runs), ``task_status``, ``respond`` (answer an escalation, e.g.
``"approve"`` a write that waits for confirmation; the task continues and the reply is its new outcome) and
``cancel_task`` (stop a running task, e.g. from a chat's stop button; its completed steps are kept).

    >>> from mcp import Client
    >>> server = build_server(Orchestrator(llm=my_llm, tools=[lookup]))             # doctest: +SKIP
    >>> async with Client(server) as client:                                       # doctest: +SKIP
    ...     out = await client.call_tool("run_task", {"task": "Paris or Rome?"}, progress_callback=show)

    tetrarch mcp serve --stdio --llm openai:gpt-4.1 --base-url http://127.0.0.1:8000/v1
    tetrarch mcp serve --http 127.0.0.1:8765 --address auto
    tetrarch mcp serve --http 0.0.0.0:8765 --token "$TETRARCH_TOKEN"   # off loopback: a bearer token is required

Whoever reaches the HTTP port runs tasks with the server's model key and tools, so any address but loopback
needs ``--token`` (or ``$TETRARCH_TOKEN``): every request must carry ``Authorization: Bearer <token>``, and the
server refuses to start without one (``agents.ui.auth``, shared with ``tetrarch ui``). Without a token, only
requests naming a loopback host from no origin or a loopback one are answered: ``agents.ui.loopback``, the rule
``tetrarch ui`` enforces, given to the MCP SDK's own DNS-rebinding check too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pydantic
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations

from agents.errors import TaskTimeoutError, TetrarchError
from agents.outputs import schema_spec

if TYPE_CHECKING:
    from agents.api import Orchestrator, TaskHandle
    from agents.events import AnyEvent
    from agents.results import TaskResult
    from agents.ui.loopback import HostRule

__all__ = ["TaskOutcome", "build_server", "http_app", "main", "parse_http", "serve", "transport_security"]

_SUMMARY_STEPS = 12


class TaskOutcome(pydantic.BaseModel):
    """What ``run_task`` / ``task_status`` / ``respond`` return (the tool's structured output)."""

    task_id: str
    status: str
    """accepted | escalated | clarify | refused | failed | cancelled — or ``running`` from ``task_status``."""
    answer: str | None = None
    question: str | None = None
    """For escalated / clarify: what tetrarch needs to know; answer it with ``respond``."""
    error: str | None = None
    plan_summary: list[str] = pydantic.Field(default_factory=list)
    """One line per step: ``3. subtract(a, b) — completed``."""
    output: Any = None
    """With ``run_task``'s ``output_schema``: the answer as JSON data valid under it (None otherwise)."""
    note: str | None = None
    """From ``cancel_task``: what the cancel did, or why there was nothing to cancel."""


def _outcome(result: TaskResult) -> TaskOutcome:
    status = {s.step_id: s.status for s in result.steps}
    lines = []
    for step in (result.plan.steps if result.plan else [])[:_SUMMARY_STEPS]:
        what = f"{step.tool_name}({', '.join(step.tool_input)})" if step.tool_name else "reasoning"
        lines.append(f"{step.step_id}. {what} — {status.get(step.step_id, 'not run')}: {step.description}")
    return TaskOutcome(task_id=result.task_id, status=result.status, answer=result.answer,
                       question=getattr(result, "question", None), error=result.error, plan_summary=lines,
                       output=result.output)


def _progress_text(event: AnyEvent) -> str:
    payload = event.payload
    step = getattr(payload, "step_id", None) or getattr(getattr(payload, "step", None), "step_id", None)
    tool = getattr(payload, "tool_name", None) or getattr(getattr(payload, "step", None), "tool_name", None)
    parts = [event.type] + ([f"step {step}"] if step else []) + ([tool] if tool else [])
    return " ".join(parts)


async def _follow(handle: TaskHandle, ctx: Context, after_seq: int = 0) -> TaskOutcome:
    # One progress notification per task event; the count is the progress value (the total is unknown).
    done = 0
    async for event in handle.aevents(after_seq):
        done += 1
        await ctx.report_progress(done, None, _progress_text(event))
    return _outcome(await handle.aresult())


@contextlib.contextmanager
def _told_to_the_client() -> Iterator[None]:
    """tetrarch's own errors (an empty task, an unknown task id, ``respond`` to a task that is not waiting) are the
    client's to read: the SDK's ``ToolError`` sends their message as the tool's error result. Anything else stays
    a crash, which the SDK reports without its text and logs with its traceback."""
    try:
        yield
    except TetrarchError as exc:
        raise ToolError(str(exc)) from exc


def build_server(orchestrator: Orchestrator | Callable[[], Orchestrator], name: str = "tetrarch") -> MCPServer:
    """An MCP server whose tools run tasks on ``orchestrator`` (or on the one a factory builds at first use)."""
    # The tools' annotations are resolved against this module's globals (Context, TaskOutcome).
    server = MCPServer(name, instructions="Hand a multi-step task to tetrarch: it plans a DAG of tool calls, runs "
                                          "them in parallel and checks the result. Escalations are answered with "
                                          "respond(task_id, text).", log_level="WARNING")
    holder = _Lazy(orchestrator)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True))
    async def run_task(task: str, ctx: Context, output_schema: dict[str, Any] | None = None) -> TaskOutcome:
        """Run a task with tetrarch (plan, parallel tool calls, reflection) and return its outcome. With
        ``output_schema`` (a JSON schema) the answer is written and validated as JSON under it (``output``)."""
        with _told_to_the_client():
            orch = await holder.get()
            typed = None if output_schema is None else schema_spec(output_schema)
            handle = await asyncio.to_thread(lambda: orch.submit(task, output_type=typed))
            return await _follow(handle, ctx)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def task_status(task_id: str) -> TaskOutcome:
        """The current outcome of a task (``running`` while it runs)."""
        with _told_to_the_client():
            orch = await holder.get()
            handle = await asyncio.to_thread(orch.handle, task_id)
            try:
                return _outcome(await handle.aresult(timeout=0))
            except TaskTimeoutError:
                return TaskOutcome(task_id=task_id, status="running")

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    async def respond(task_id: str, text: str, ctx: Context) -> TaskOutcome:
        """Answer an escalated task ("approve" runs a tool call waiting for confirmation); returns its new outcome."""
        with _told_to_the_client():
            orch = await holder.get()
            # Progress covers the continuation only: the events up to the escalation were reported already.
            before, seen = await asyncio.to_thread(orch.handle, task_id), 0
            with contextlib.suppress(TaskTimeoutError):  # still running: orch.respond says so below
                await before.aresult(timeout=0)
                async for event in before.aevents():
                    seen = event.seq
            handle = await asyncio.to_thread(orch.respond, task_id, text)
            return await _follow(handle, ctx, seen)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                             idempotent_hint=True))
    async def cancel_task(task_id: str) -> TaskOutcome:
        """Stop a running task: its tool calls and model calls stop, it ends "cancelled" and keeps its
        completed steps. Cancelling a finished task changes nothing (the note says so)."""
        with _told_to_the_client():
            orch = await holder.get()
            done = await asyncio.to_thread(lambda: orch.cancel(task_id, by="MCP"))
            handle = await asyncio.to_thread(orch.handle, task_id)
            outcome = _outcome(await handle.aresult(timeout=10))  # finished (or waiting) by now
            return outcome.model_copy(update={"note": done.message})

    return server


class _Lazy:
    """The Orchestrator, built on first use in a worker thread (its constructor blocks on Ray)."""

    def __init__(self, source: Orchestrator | Callable[[], Orchestrator]) -> None:
        from agents.api import Orchestrator

        self._orch = source if isinstance(source, Orchestrator) else None
        self._factory = None if self._orch is not None else source
        self._lock = asyncio.Lock()

    async def get(self) -> Orchestrator:
        async with self._lock:
            if self._orch is None:
                self._orch = await asyncio.to_thread(self._factory)  # type: ignore[arg-type]
            return self._orch


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    if not attr:
        raise SystemExit(f"--llm-factory {path!r}: use MODULE:CALLABLE")
    return getattr(importlib.import_module(module), attr)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tetrarch mcp", description="tetrarch as an MCP server.")
    sub = p.add_subparsers(dest="command", required=True)
    serve_p = sub.add_parser("serve", help="serve run_task / task_status / respond / cancel_task over MCP")
    how = serve_p.add_mutually_exclusive_group()
    how.add_argument("--stdio", action="store_true", help="speak MCP on stdin/stdout (the default)")
    how.add_argument("--http", metavar="HOST:PORT", help="streamable HTTP at http://HOST:PORT/mcp, e.g. 127.0.0.1:8765")
    serve_p.add_argument("--llm", help="openai:MODEL (with --base-url) or local[:NAME]; default: the embedded model")
    # Tests build a scripted LLM with this; not a user option (no help text, not in the docs).
    serve_p.add_argument("--llm-factory", metavar="MODULE:CALLABLE", help=argparse.SUPPRESS)
    serve_p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    serve_p.add_argument("--address", help="Ray address: auto or ray://host:10001 (default: local Ray)")
    serve_p.add_argument("--store", help="SQLite store path (default ~/.tetrarch/tetrarch.db)")
    serve_p.add_argument("--token", default=os.environ.get("TETRARCH_TOKEN"),
                         help="with --http: the bearer token every request must carry (default $TETRARCH_TOKEN); "
                              "required for any address but 127.0.0.1 / ::1 / localhost")
    return p


def parse_http(http: str) -> tuple[str, int]:
    """``HOST:PORT`` → (host, port); an empty host is 127.0.0.1."""
    host, _, port = http.rpartition(":")
    if not port.isdigit():
        raise SystemExit(f"--http {http!r}: use HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]") or "127.0.0.1", int(port)


def transport_security(rule: HostRule) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check set to ``rule`` (its default knows three spellings of loopback only, and is
    off for any other, 127.0.0.2 or Localhost included)."""
    return TransportSecuritySettings(enable_dns_rebinding_protection=rule.names is not None,
                                     allowed_hosts=rule.allowed_hosts(), allowed_origins=rule.allowed_origins())


def http_app(server: MCPServer, host: str, token: str | None) -> Any:
    """The streamable-HTTP ASGI app at ``/mcp`` for a server listening on ``host``: behind ``BearerAuth`` when
    ``token`` is given, else answering only what the loopback rule lets through (``agents.ui.loopback``). Raises
    ``TokenError`` for a non-loopback ``host`` without a token, or a short token."""
    from agents.ui.auth import BearerAuth
    from agents.ui.loopback import HostGuard, host_rule

    rule = host_rule(host, token)
    app = server.streamable_http_app(host=host, transport_security=transport_security(rule))
    inner = app if token is None else BearerAuth(app, token, realm="tetrarch mcp")
    return HostGuard(inner, rule)


def serve(orchestrator: Orchestrator | Callable[[], Orchestrator], http: str | None = None, *,
          token: str | None = None) -> None:
    """Serve until interrupted: stdio when ``http`` is None, else streamable HTTP on ``HOST:PORT`` (off
    loopback only with ``token``)."""
    server = build_server(orchestrator)
    if http is None:
        server.run("stdio")
        return
    import uvicorn

    host, port = parse_http(http)
    uvicorn.run(http_app(server, host, token), host=host, port=port, log_level="warning")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.http is not None:
        from agents.ui.listen import ListenError, check_listen
        from agents.ui.loopback import TokenError, host_rule

        host, port = parse_http(args.http)
        try:  # before the Orchestrator starts: refusing must not cost a Ray start
            host_rule(host, args.token)
            check_listen(host, port)
        except (TokenError, ListenError) as exc:
            print(f"tetrarch mcp: {exc}", file=sys.stderr)
            return 2

    def make() -> Orchestrator:
        from pathlib import Path

        from agents.api import Orchestrator
        from agents.config import RuntimeConfig

        llm = _load(args.llm_factory)() if args.llm_factory else _build_llm(args.llm, args.base_url)
        config = RuntimeConfig(store_path=Path(args.store)) if args.store else RuntimeConfig()
        return Orchestrator(llm=llm, config=config, address=args.address)

    stdio = args.http is None
    with _stdout_to_stderr(stdio):
        orch = make()  # before serving: a bad --llm or an unreachable cluster fails here, not in a client's call
    try:
        serve(orch, args.http, token=args.token)
    finally:
        with _stdout_to_stderr(stdio):
            orch.shutdown()
    return 0


@contextlib.contextmanager
def _stdout_to_stderr(active: bool) -> Iterator[None]:
    """On the stdio transport stdout is the MCP wire: one stray line breaks the client's session. While the
    Orchestrator starts and stops, fd 1 points at stderr, so Ray's messages, prints and warnings, and every
    process started meanwhile (Ray's, the model server, which keep the descriptors they inherit), write there.
    While serving, the SDK's stdio transport diverts fd 1 the same way."""
    if not active:
        yield
        return
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(wire, 1)
        os.close(wire)


def _build_llm(spec: str | None, base_url: str | None) -> Any:
    from agents.llm.factory import build_llm

    return build_llm(spec, base_url)


if __name__ == "__main__":
    sys.exit(main())
