"""Listing MCP servers' tools, and turning a mixed ``tools=[...]`` list into plain ``Tool`` objects.

    >>> from agents.tools import resolve_tools, MCPServerStdio
    >>> tools = resolve_tools([lookup, MCPServerStdio("python", ["server.py"])])   # doctest: +SKIP

Listing happens at start-up (the Orchestrator's constructor), and again when a server's list changes
(``catalog.ToolCatalog``); the resulting Tools carry the server configuration, not a connection, so they
pickle to executors, which open their own sessions on first use.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from agents.tools.decorator import Tool, tool
from agents.tools.errors import ToolDefinitionError, ToolError
from agents.tools.mcp.errors import MCPListError
from agents.tools.mcp.servers import MCPServer
from agents.tools.mcp.tool import MCPTool, spec_from_listing

__all__ = ["alist_server_tools", "aresolve_tools", "check_unique", "list_server_tools", "mcp_servers",
           "resolve_tools", "tools_changed", "tools_from_listing"]

T = TypeVar("T")


def tools_from_listing(server: MCPServer, listed: Sequence[Any]) -> list[MCPTool]:
    """``tools/list`` entries (SDK models or wire dicts) → MCPTools, after ``include`` / ``exclude``."""
    entries = [item if isinstance(item, dict) else item.model_dump(by_alias=True, mode="json", exclude_none=True)
               for item in listed]
    names = {e["name"] for e in entries}
    unknown = (set(server.include or ()) | set(server.overrides)) - names
    if unknown:
        raise ToolDefinitionError(f"MCP server {server.label!r} lists no tool named {sorted(unknown)} (named in "
                                  f"include/overrides); it lists: {', '.join(sorted(names)) or '(none)'}")
    chosen = [e for e in entries if (server.include is None or e["name"] in server.include)
              and e["name"] not in server.exclude]
    return [MCPTool(server, e["name"], spec_from_listing(server, e)) for e in chosen]


async def alist_server_tools(server: MCPServer) -> list[MCPTool]:
    """The server's tools, listed through this process's shared session (kept open for later calls)."""
    from agents.tools.mcp.connection import connection_for

    try:
        listed = await connection_for(server).list_tools()
    except ToolError as exc:
        raise MCPListError(f"could not list the tools of MCP server {server.label!r}: {exc}",
                           server=server.label) from None
    return tools_from_listing(server, listed)


def list_server_tools(server: MCPServer) -> list[MCPTool]:
    """Blocking: connect, list, disconnect (a stdio server's process lives only for the listing)."""
    async def once() -> list[MCPTool]:
        from agents.tools.mcp.connection import close_connections

        try:
            return await alist_server_tools(server)
        finally:
            await close_connections()

    return _run_blocking(once)


async def aresolve_tools(items: Iterable[Any]) -> list[Tool]:
    """``resolve_tools`` for async callers: servers are listed concurrently."""
    items = list(items)
    servers = [i for i in items if isinstance(i, MCPServer)]
    listed = dict(zip((id(s) for s in servers), await asyncio.gather(*(alist_server_tools(s) for s in servers))))
    return _flatten(items, lambda s: listed[id(s)])


def resolve_tools(items: Iterable[Any]) -> list[Tool]:
    """Turn ``tools=[...]`` — ``Tool`` objects, plain functions and MCP server configurations — into Tools.

    Each server's tools are listed now (blocking); functions get ``@tool`` defaults. Raises
    ``ToolDefinitionError`` (``MCPListError`` for a server that cannot be listed) and refuses duplicate names.
    """
    items = list(items)
    if not any(isinstance(i, MCPServer) for i in items):
        return _flatten(items, lambda s: [])
    async def listed_then_closed() -> list[Tool]:
        from agents.tools.mcp.connection import close_connections

        try:
            return await aresolve_tools(items)
        finally:  # the driver only lists: its stdio server processes end here, executors start their own
            await close_connections()

    return _run_blocking(listed_then_closed)


def _flatten(items: list[Any], tools_of: Callable[[MCPServer], list[MCPTool]]) -> list[Tool]:
    out: list[Tool] = []
    for item in items:
        out.extend(tools_of(item) if isinstance(item, MCPServer) else [item if isinstance(item, Tool) else tool(item)])
    return check_unique(out)


def check_unique(tools: list[Tool]) -> list[Tool]:
    """``tools`` itself, or ``ToolDefinitionError`` naming both sources of a name used twice."""
    seen: dict[str, str] = {}
    for t in tools:
        origin = f"MCP server {t.server.label!r}" if isinstance(t, MCPTool) else "a Python tool"
        if t.name in seen:
            raise ToolDefinitionError(f"two tools are named {t.name!r} ({seen[t.name]} and {origin}); give the "
                                      "MCP server a prefix= or the function name='...'", tool_name=t.name)
        seen[t.name] = origin
    return tools


def mcp_servers(items: Iterable[Any] | None) -> list[MCPServer]:
    """The MCP server configurations among ``tools=[...]`` (what a ``ToolCatalog`` re-lists)."""
    return [i for i in items or () if isinstance(i, MCPServer)]


def _run_blocking(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, on a private loop (in a thread if one is running here)."""
    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tetrarch-mcp-list") as pool:
        return pool.submit(asyncio.run, main()).result()


def tools_changed(server: MCPServer) -> bool:
    """True once this process's session with ``server`` saw its tool list change
    (``notifications/tools/list_changed``) since the last listing; ``alist_server_tools`` re-lists."""
    from agents.tools.mcp.connection import tools_changed as changed

    return changed(server)
