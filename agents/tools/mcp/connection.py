"""One live MCP session per server configuration per process and event loop, shared by concurrent calls.

The SDK's ``Client`` is an async context manager whose transport runs in anyio task groups: it must be
entered and exited by the same task. So a background *owner* task enters it, publishes the connected
client, and holds it open until asked to stop; callers send their requests through the shared client
from their own tasks (the SDK multiplexes concurrent requests on one session). Cancelling a caller
mid-call (a step timeout) abandons only that request; the session stays usable.

A broken session (the server crashed, the HTTP endpoint went away) is marked broken by the call that
saw it; the next call stops the old owner and reconnects, with exponential backoff between failed
connects. Sessions are per process: a Tool unpickled in a Ray executor opens its own on first use.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import mcp_types
import pydantic
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agents.tools.errors import PermanentToolError, ToolArgumentError, ToolError
from agents.tools.mcp.errors import MCPCallInterruptedError, MCPConnectionError
from agents.tools.mcp.servers import MCPServer, MCPServerHTTP, MCPServerStdio

__all__ = ["MCPConnection", "close_connection", "close_connections", "connection_for", "note_tools_changed", "on_tools_changed",
           "tools_changed"]

log = logging.getLogger("tetrarch.mcp")

_MAX_BACKOFF_S = 30.0
_CONNECTIONS: dict[tuple[str, int], MCPConnection] = {}
_CHANGED: set[str] = set()
"""Keys of servers whose tool list changed (a notification arrived) since this process last listed them."""
_LISTENERS: list[Callable[[str], None]] = []


def connection_for(server: MCPServer) -> MCPConnection:
    """This process's session with ``server`` on the running loop (created, not yet connected, if new)."""
    loop = asyncio.get_running_loop()
    slot = (server.key(), id(loop))
    conn = _CONNECTIONS.get(slot)
    if conn is None or conn.loop is not loop:  # an id reused by a new loop after the old one closed
        conn = _CONNECTIONS[slot] = MCPConnection(server, loop)
    return conn


async def close_connections() -> None:
    """Close every session this process opened on the running loop (stops stdio server processes)."""
    loop = asyncio.get_running_loop()
    for slot, conn in list(_CONNECTIONS.items()):
        if conn.loop is loop:
            del _CONNECTIONS[slot]
            await conn.aclose()


async def close_connection(server: MCPServer) -> None:
    """Close this process's session with ``server`` on the running loop, if there is one."""
    slot = (server.key(), id(asyncio.get_running_loop()))
    conn = _CONNECTIONS.pop(slot, None)
    if conn is not None:
        await conn.aclose()


def tools_changed(server: MCPServer) -> bool:
    return server.key() in _CHANGED


def mark_listed(server: MCPServer) -> None:
    _CHANGED.discard(server.key())


def note_tools_changed(key: str) -> None:
    """Record that the server with this ``MCPServer.key()`` changed its tool list, and tell the listeners
    (every time: a process that never re-lists, like an executor, must forward each change it sees)."""
    _CHANGED.add(key)
    for listener in _LISTENERS:
        try:
            listener(key)
        except Exception:  # a broken listener must not break the session that saw the change
            log.exception("tool-list change listener failed")


def on_tools_changed(listener: Callable[[str], None]) -> None:
    """Call ``listener(server_key)`` whenever this process sees a server's tool list change: a
    ``notifications/tools/list_changed`` (or a list-changed subscription event), or a call the server
    answered with "unknown tool". Executors forward it to the Supervisor, which re-lists before the next plan."""
    _LISTENERS.append(listener)


class MCPConnection:
    """The shared session with one server. ``call_tool`` raises tetrarch tool errors, never SDK ones."""

    def __init__(self, server: MCPServer, loop: asyncio.AbstractEventLoop,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        self.loop = loop
        self._clock = clock
        self._lock = asyncio.Lock()
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._generation = 0
        self._broken = False
        self._failures = 0
        self._retry_at = 0.0
        self._last_error = ""

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server lists (all pages)."""
        client, _ = await self._connected(None)
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                mark_listed(self.server)
                return listed

    async def call_tool(self, tool_name: str, remote_name: str, arguments: dict[str, Any],
                        idempotent: bool) -> mcp_types.CallToolResult:
        client, generation = await self._connected(tool_name)
        try:
            return await client.call_tool(remote_name, arguments)
        except MCPError as exc:
            if exc.code != mcp_types.CONNECTION_CLOSED:
                raise self._rejected(tool_name, remote_name, exc) from None
            broke: BaseException = exc
        except (pydantic.ValidationError, ToolError) as exc:
            raise PermanentToolError(f"MCP server {self.server.label!r} answered {remote_name!r} with an invalid "
                                     f"result: {exc}", tool_name=tool_name) from None
        except Exception as exc:  # noqa: BLE001 - transport failures (OSError, httpx, closed streams, groups)
            broke = exc
        self._mark_broken(generation)
        raise self._interrupted(tool_name, remote_name, idempotent, broke)

    def _rejected(self, tool_name: str, remote_name: str, exc: MCPError) -> ToolError:
        text = f"MCP server {self.server.label!r} rejected the call of {remote_name!r}: {exc.error.message}"
        if is_unknown_tool(exc.error.message):
            note_tools_changed(self.server.key())  # its list changed under us: re-list before the next plan
        if exc.code == mcp_types.INVALID_PARAMS:
            return ToolArgumentError(text, tool_name=tool_name)
        return PermanentToolError(text, tool_name=tool_name)

    def _interrupted(self, tool_name: str, remote_name: str, idempotent: bool, cause: BaseException) -> ToolError:
        what = _describe(cause)
        if idempotent:
            return MCPConnectionError(
                f"MCP server {self.server.label!r} closed the connection during {remote_name!r} ({what}); "
                "the next attempt reconnects", tool_name=tool_name, server=self.server.label)
        return MCPCallInterruptedError(
            f"MCP server {self.server.label!r} closed the connection during {remote_name!r} ({what}); the tool is "
            "not idempotent and may or may not have taken effect, so it is not repeated automatically",
            tool_name=tool_name, server=self.server.label)

    def _mark_broken(self, generation: int) -> None:
        # A late failure of an old session must not condemn the fresh one that replaced it.
        if generation == self._generation:
            self._broken = True

    async def _connected(self, tool_name: str | None) -> tuple[Client, int]:
        client = self._client
        if client is not None and not self._broken and self._owner is not None and not self._owner.done():
            return client, self._generation
        async with self._lock:
            if self._client is not None and not self._broken and self._owner is not None \
                    and not self._owner.done():
                return self._client, self._generation
            await self._stop_owner()
            wait = self._retry_at - self._clock()
            if wait > 0:
                raise MCPConnectionError(
                    f"MCP server {self.server.label!r} is unreachable ({self._last_error}); retrying the "
                    f"connection in {wait:.1f}s", tool_name=tool_name, retry_after=wait, server=self.server.label)
            try:
                self._client = await self._start_owner()
            except Exception as exc:  # noqa: BLE001 - every connect failure is reported the same way
                self._failures += 1
                self._last_error = _describe(exc)
                delay = min(_MAX_BACKOFF_S, self.server.reconnect_backoff_s * 2 ** (self._failures - 1))
                self._retry_at = self._clock() + delay
                raise MCPConnectionError(
                    f"could not connect to MCP server {self.server.label!r}: {self._last_error}",
                    tool_name=tool_name, retry_after=delay, server=self.server.label) from None
            self._failures, self._broken = 0, False
            self._generation += 1
            return self._client, self._generation

    async def _start_owner(self) -> Client:
        ready: asyncio.Future[Client] = self.loop.create_future()
        self._stop = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp:{self.server.label}")
        try:
            async with asyncio.timeout(self.server.connect_timeout_s) as deadline:
                return await asyncio.shield(ready)
        except BaseException as exc:
            # Timed out, failed, or the caller was cancelled while connecting: abandon this session.
            await self._stop_owner()
            if isinstance(exc, TimeoutError) and deadline.expired():
                raise TimeoutError(
                    f"it did not complete the MCP initialize handshake within connect_timeout_s="
                    f"{self.server.connect_timeout_s:g}s; check that the command starts an MCP server (over stdio, "
                    "nothing else may write to its stdout), or give a slow server more time with "
                    "connect_timeout_s=...") from None
            raise

    async def _own(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(_client_for(self.server, self._on_message))
                if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    listener = asyncio.create_task(self._listen(client))
                    stack.push_async_callback(_cancel_and_wait, listener)
                ready.set_result(client)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the connecting caller, or logged
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            else:
                log.debug("MCP session with %s ended: %s", self.server.label, _describe(exc))

    async def _stop_owner(self) -> None:
        owner, self._owner, self._client = self._owner, None, None
        if self._stop is not None:
            self._stop.set()
        if owner is not None:
            try:
                async with asyncio.timeout(5):
                    await asyncio.shield(owner)
            except (TimeoutError, Exception):  # noqa: BLE001 - a session that will not close cleanly is cut
                owner.cancel()
                await asyncio.gather(owner, return_exceptions=True)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            note_tools_changed(self.server.key())

    async def _listen(self, client: Client) -> None:
        # 2026-era sessions announce list changes on a subscriptions/listen stream, not as notifications.
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    note_tools_changed(self.server.key())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a server without subscriptions simply never announces changes
            log.debug("no tool-list subscription with %s: %s", self.server.label, _describe(exc))

    async def aclose(self) -> None:
        async with self._lock:
            await self._stop_owner()


def _client_for(server: MCPServer, on_message: Callable[[Any], Any]) -> Any:
    options: dict[str, Any] = {"message_handler": on_message, "cache": None, "mode": server.protocol,
                               "client_info": mcp_types.Implementation(name="tetrarch", version="0.1")}
    if isinstance(server, MCPServerStdio):
        return Client(StdioServerParameters(command=server.command, args=list(server.args),
                                            env=dict(server.env) if server.env else None, cwd=server.cwd), **options)
    if isinstance(server, MCPServerHTTP):
        return _http_client(server, options)
    raise TypeError(f"unsupported MCP server configuration: {type(server).__name__}")


def _http_client(server: MCPServerHTTP, options: dict[str, Any]) -> Any:
    if not server.headers:
        return Client(server.url, **options)
    import httpx2  # the SDK's HTTP client; headers travel on a client of our own

    class _WithHeaders:
        async def __aenter__(self) -> Client:
            self._http = httpx2.AsyncClient(headers=dict(server.headers or {}),
                                            timeout=httpx2.Timeout(30.0, read=300.0))
            self._client = Client(streamable_http_client(server.url, http_client=self._http), **options)
            await self._http.__aenter__()
            try:
                return await self._client.__aenter__()
            except BaseException:
                await self._http.__aexit__(*sys.exc_info())
                raise

        async def __aexit__(self, *exc: Any) -> None:
            try:
                await self._client.__aexit__(*exc)
            finally:
                await self._http.__aexit__(*exc)

    return _WithHeaders()


def is_unknown_tool(message: str) -> bool:
    """The spec's answer to a call of a tool the server no longer has (``-32602 Unknown tool: x``); the
    Python SDK's servers send the same text as an ``isError`` result."""
    return message.lstrip().lower().startswith("unknown tool")


async def _cancel_and_wait(task: asyncio.Task[Any]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _describe(exc: BaseException) -> str:
    """The innermost useful message: transports raise exception groups around one connect error."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, OSError) else text
