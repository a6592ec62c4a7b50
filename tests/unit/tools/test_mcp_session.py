"""The per-process MCP session: tool-list changes, unreachable servers, cancellation mid-call."""

from __future__ import annotations

import asyncio
import sys

import pytest
from support.mcp_fixtures import free_port, http_server, stdio_server

from agents.tools import MCPServerHTTP, MCPServerStdio, ToolDispatcher, ToolRegistry
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


def test_an_unreachable_server_fails_listing_and_calls_with_its_name():
    server = MCPServerHTTP(f"http://127.0.0.1:{free_port()}/mcp", name="nowhere", connect_timeout_s=5)
    with pytest.raises(MCPListError, match="could not list the tools of MCP server 'nowhere'"):
        resolve_tools([server])

    async def call():
        try:
            return await connection_for(server).call_tool("t", "t", {}, True)
        finally:
            await close_connections()

    with pytest.raises(MCPConnectionError, match="could not connect to MCP server 'nowhere'") as info:
        asyncio.run(call())
    assert info.value.kind == "transient" and info.value.retry_after and info.value.server == "nowhere"


def test_cancelling_a_call_mid_flight_keeps_the_same_session_for_the_next_one():
    server = stdio_server()

    async def scenario():
        try:
            tools = {t.name: t for t in await alist_server_tools(server)}
            conn = connection_for(server)
            slow = asyncio.create_task(tools["slow"].invoke({"seconds": 30}))
            await asyncio.sleep(0.3)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            generation = conn._generation
            value = await tools["population"].invoke({"city": "Rome"})
            return value, generation == conn._generation
        finally:
            await close_connections()

    assert asyncio.run(scenario()) == (2.8, True)


def test_http_headers_are_sent_with_every_request_and_kept_out_of_messages():
    with http_server() as proc:
        server = proc.config(headers={"Authorization": "Bearer s3cret", "X-Tenant": "t1"})

        async def scenario():
            try:
                tools = {t.name: t for t in await alist_server_tools(server)}
                return [await tools["header"].invoke({"name": n}) for n in ("authorization", "x-tenant", "x-none")]
            finally:
                await close_connections()

        assert asyncio.run(scenario()) == ["Bearer s3cret", "t1", ""]
        proc.stop()
        with pytest.raises(MCPListError) as info:
            resolve_tools([server.model_copy(update={"connect_timeout_s": 5})])
    assert "s3cret" not in str(info.value) and "s3cret" not in repr(server)


@pytest.mark.parametrize("how", ["missing command", "exits at once"])
def test_an_unstartable_stdio_server_fails_listing_and_calls_with_its_name(how):
    server = (MCPServerStdio("/nonexistent/mcp-server", name="gone") if how == "missing command" else
              MCPServerStdio(sys.executable, ["-c", "import sys; sys.exit(1)"], name="gone", connect_timeout_s=20))
    with pytest.raises(MCPListError, match="could not list the tools of MCP server 'gone'"):
        resolve_tools([server])

    async def call():
        try:
            return await connection_for(server).call_tool("t", "t", {}, True)
        finally:
            await close_connections()

    with pytest.raises(MCPConnectionError, match="could not connect to MCP server 'gone'") as info:
        asyncio.run(call())
    assert info.value.kind == "transient" and info.value.server == "gone"


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
