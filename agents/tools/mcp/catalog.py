"""The tools a running Orchestrator shows its roles, re-listed when an MCP server's tool list changes.

The Supervisor holds one ``ToolCatalog`` and calls ``refresh()`` before each task starts; a new list is
pushed to the router, planner and executors, so the *next* plan sees it (a plan already being written
keeps the catalog it started with).

A change is noticed three ways: a ``notifications/tools/list_changed`` (or a list-changed subscription
event) on a session of this process, one forwarded by an executor that saw it on its own session, or a
call the server answered with "unknown tool" (the tool went away under us). HTTP servers are watched
through a session this process keeps open; a stdio server is re-listed from a fresh process, which is
closed again (every process has its own stdio server, with its own memory).

    >>> catalog = ToolCatalog(resolve_tools([lookup, server]), [server])       # doctest: +SKIP
    >>> new_tools = await catalog.refresh()    # None: nothing changed         # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from agents.tools.decorator import Tool
from agents.tools.errors import ToolDefinitionError
from agents.tools.mcp.listing import alist_server_tools, check_unique, tools_changed
from agents.tools.mcp.servers import MCPServer, MCPServerStdio
from agents.tools.mcp.tool import MCPTool

__all__ = ["ToolCatalog", "ToolRefresher", "merge_listing"]

log = logging.getLogger("tetrarch.mcp")


def merge_listing(tools: Sequence[Tool], fresh: dict[str, list[MCPTool]],
                  servers: Sequence[MCPServer]) -> list[Tool]:
    """``tools`` with each re-listed server's tools (``fresh``, by server key) in place of its old ones, at
    the position its first tool had (so an unchanged prefix of the catalog text stays unchanged); a server
    that had no tools before goes last.

    >>> merge_listing([], {}, [])
    []
    """
    out: list[Tool] = []
    placed: set[str] = set()
    for t in tools:
        key = t.server.key() if isinstance(t, MCPTool) else None
        if key is None or key not in fresh:
            out.append(t)
        elif key not in placed:
            placed.add(key)
            out.extend(fresh[key])
    for server in servers:
        if server.key() in fresh and server.key() not in placed:
            out.extend(fresh[server.key()])
    return out


class ToolCatalog:
    """The current tool list of one Orchestrator and the MCP servers it came from."""

    def __init__(self, tools: Sequence[Tool], servers: Sequence[MCPServer]) -> None:
        self.tools: list[Tool] = list(tools)
        self.version = 0
        """How many times the list changed since start-up."""
        self._servers = {s.key(): s for s in servers}
        # HTTP servers are listed once more here, which opens the session their change notifications arrive
        # on. A stdio server was listed from a fresh process moments ago (by the driver): nothing to watch.
        self._watched = {k for k, s in self._servers.items() if isinstance(s, MCPServerStdio)}
        self._lock = asyncio.Lock()

    def stale(self) -> list[MCPServer]:
        """The servers to list again: changed since their last listing, or not yet watched."""
        return [s for k, s in self._servers.items() if k not in self._watched or tools_changed(s)]

    async def refresh(self) -> list[Tool] | None:
        """List the stale servers again; the new tool list when any tool was added, removed or changed, else
        None. A server that cannot be listed keeps its old tools (and is tried again before the next task)."""
        if not self.stale():
            return None
        async with self._lock:
            stale = self.stale()
            listed = await asyncio.gather(*(self._relist(s) for s in stale))
            fresh = {s.key(): got for s, got in zip(stale, listed) if got is not None}
            merged = merge_listing(self.tools, fresh, list(self._servers.values()))
            if [t.spec for t in merged] == [t.spec for t in self.tools]:
                return None
            try:
                check_unique(merged)
            except ToolDefinitionError as exc:
                log.warning("the new tool list is not used: %s", exc)
                return None
            self.tools = merged
            self.version += 1
            log.info("tool list changed (version %d): %d tools", self.version, len(merged))
            return merged

    async def _relist(self, server: MCPServer) -> list[MCPTool] | None:
        from agents.tools.mcp.connection import close_connection

        try:
            listed = await alist_server_tools(server)
        except ToolDefinitionError as exc:
            log.warning("could not list the tools of MCP server %r again; keeping its old tools: %s",
                        server.label, exc)
            return None
        finally:
            if isinstance(server, MCPServerStdio):
                await close_connection(server)
        self._watched.add(server.key())
        return listed


class ToolRefresher:
    """Refreshes a catalog one refresh at a time and hands a new list to ``apply`` (which pushes it to the
    roles). A task waits for a refresh at most ``wait_s``: a slow or hung server must not hold up every
    submission, so past that the refresh finishes in the background and serves the tasks after.

        >>> refresher = ToolRefresher(catalog, runtime.use_tools)                 # doctest: +SKIP
        >>> await refresher.current()       # before a task starts                # doctest: +SKIP
    """

    def __init__(self, catalog: ToolCatalog, apply: Callable[[list[Tool]], Awaitable[None]],
                 wait_s: float = 10.0) -> None:
        self.catalog = catalog
        self._apply = apply
        self._wait_s = wait_s
        self._running: asyncio.Future[None] | None = None

    async def current(self) -> None:
        """Make the roles' catalog current before a task starts (a no-op when no server changed)."""
        if self._running is None or self._running.done():
            if not self.catalog.stale():
                return
            self._running = asyncio.ensure_future(self._refresh())
        await asyncio.wait({self._running}, timeout=self._wait_s)

    async def _refresh(self) -> None:
        try:
            tools = await self.catalog.refresh()
            if tools is not None:
                await self._apply(tools)
        except Exception:  # the old catalog stays in use; the next task tries again
            log.exception("could not refresh the tool list")
