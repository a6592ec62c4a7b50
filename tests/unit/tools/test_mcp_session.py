"""The per-process MCP session: tool-list changes, unreachable servers, cancellation mid-call."""

from __future__ import annotations

import asyncio
import sys

import pytest
from support.mcp_fixtures import free_port, http_server, stdio_server

from agents.tools import MCPServerHTTP, MCPServerStdio, ToolDispatcher, ToolRegistry, resolve_tools
from agents.tools.mcp import (
    MCPConnectionError,
    MCPListError,
    alist_server_tools,
    resolve_tools,
    tools_changed,
)
from agents.tools.mcp.connection import MCPConnection, close_connections, connection_for


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_tool_list_change_sets_the_flag_and_a_refresh_lists_the_new_tool(protocol):
    server = stdio_server(protocol=protocol)

    async def scenario():
        try:
            tools = await alist_server_tools(server)
            assert not tools_changed(server)
            dispatcher = ToolDispatcher(ToolRegistry(tools))
            await dispatcher.call("add_tool", {"name": "twice"})
            for _ in range(50):
                if tools_changed(server):
                    break
                await asyncio.sleep(0.05)
            assert tools_changed(server)
            refreshed = await alist_server_tools(server)
            assert "twice" in [t.name for t in refreshed] and not tools_changed(server)
            return await ToolDispatcher(ToolRegistry(refreshed)).call("twice", {"x": 4})
        finally:
            await close_connections()

    assert asyncio.run(scenario()).output == 8


def _unreachable(how: str):
    """A server that cannot be reached, and the name its errors must carry."""
    match how:
        case "http nowhere":
            return MCPServerHTTP(f"http://127.0.0.1:{free_port()}/mcp", name="nowhere", connect_timeout_s=5)
        case "missing command":
            return MCPServerStdio("/nonexistent/mcp-server", name="gone")
        case _:
            return MCPServerStdio(sys.executable, ["-c", "import sys; sys.exit(1)"], name="gone", connect_timeout_s=20)


@pytest.mark.parametrize("how", ["http nowhere", "missing command", "exits at once"])
def test_an_unreachable_or_unstartable_server_fails_listing_and_calls_with_its_name(how):
    server = _unreachable(how)
    with pytest.raises(MCPListError, match=f"could not list the tools of MCP server '{server.name}'"):
        resolve_tools([server])

    async def call():
        try:
            return await connection_for(server).call_tool("t", "t", {}, True)
        finally:
            await close_connections()

    with pytest.raises(MCPConnectionError, match=f"could not connect to MCP server '{server.name}'") as info:
        asyncio.run(call())
    assert info.value.kind == "transient" and info.value.server == server.name
    if how == "http nowhere":
        assert info.value.retry_after


def test_failed_connects_back_off_exponentially_and_waiting_calls_fail_fast_naming_the_server():
    server = MCPServerHTTP(f"http://127.0.0.1:{free_port()}/mcp", name="down", reconnect_backoff_s=0.5,
                           connect_timeout_s=5)
    now = [1000.0]

    async def scenario():
        conn = MCPConnection(server, asyncio.get_running_loop(), clock=lambda: now[0])
        delays, fast = [], []
        try:
            for _ in range(4):
                with pytest.raises(MCPConnectionError, match="could not connect to MCP server 'down'") as tried:
                    await conn.call_tool("t", "t", {}, True)
                delays.append(tried.value.retry_after)
                now[0] += tried.value.retry_after / 2  # inside the window: no connect is attempted
                with pytest.raises(MCPConnectionError, match="MCP server 'down' is unreachable") as waited:
                    await conn.call_tool("t", "t", {}, True)
                fast.append(waited.value.retry_after)
                now[0] += tried.value.retry_after / 2
            return delays, fast
        finally:
            await conn.aclose()

    delays, fast = asyncio.run(scenario())
    assert delays == [0.5, 1.0, 2.0, 4.0]
    assert fast == pytest.approx([0.25, 0.5, 1.0, 2.0])


def test_a_server_that_never_initialises_fails_naming_the_timeout():
    silent = MCPServerStdio(sys.executable, ["-c", "import time; time.sleep(60)"], connect_timeout_s=1)
    with pytest.raises(MCPListError, match=r"initialize handshake within connect_timeout_s=1s"):
        resolve_tools([silent])
