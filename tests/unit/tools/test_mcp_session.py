"""The per-process MCP session: tool-list changes, unreachable servers, cancellation mid-call."""

from __future__ import annotations

import asyncio

import pytest

from agents.tools import MCPServerHTTP, ToolDispatcher, ToolRegistry
from agents.tools.mcp import MCPConnectionError, MCPListError, alist_server_tools, resolve_tools, tools_changed
from agents.tools.mcp.connection import close_connections, connection_for
from support.mcp_fixtures import free_port, stdio_server


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
