"""Tool lists that change: the catalog re-lists a server after a change notification, a change an executor
forwarded, or an "unknown tool" answer; a plan being written keeps its catalog. Real SDK servers, no Ray."""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client
from support import tools as T
from support import wire
from support.mcp_fixtures import http_server, stdio_server

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.roles.messages import PlanCompleted, StepEmitted
from agents.roles.planner import Planner
from agents.tools import ToolDispatcher, ToolRegistry
from agents.tools.mcp import (
    MCPToolError,
    ToolCatalog,
    ToolRefresher,
    merge_listing,
    resolve_tools,
    tools_changed,
)
from agents.tools.mcp.connection import close_connections, connection_for, note_tools_changed


@pytest.fixture
def http_proc():
    with http_server() as proc:
        yield proc


async def _until(condition, what: str) -> None:
    # Waits for a notification to cross a real session; fails with a message, never on a timing.
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


async def _call_from_another_client(url: str, tool: str, args: dict) -> None:
    """Another process's session (an executor elsewhere) calls the server."""
    async with Client(url) as other:
        await other.call_tool(tool, args)


def test_an_http_server_announcing_a_new_tool_is_relisted_with_it(http_proc):
    server = http_proc.config(prefix="h")

    async def scenario():
        catalog = ToolCatalog(resolve_tools([*T.ALL, server]), [server])
        try:
            before = [t.name for t in catalog.tools]
            assert await catalog.refresh() is None, "the first listing (opening the watch session) changed nothing"
            assert not catalog.stale()
            await _call_from_another_client(http_proc.url, "add_tool", {"name": "twice"})
            await _until(lambda: catalog.stale(), "the watch session saw the list change")
            tools = await catalog.refresh()
            names = [t.name for t in tools]
            assert names[:len(before)] == before and names[len(before):] == ["h_twice"]
            assert catalog.version == 1 and not catalog.stale()
            return (await ToolDispatcher(ToolRegistry(tools)).call("h_twice", {"x": 21})).output
        finally:
            await close_connections()

    assert asyncio.run(scenario()) == 42


def test_a_change_an_executor_forwards_is_relisted_when_the_server_announces_only_to_the_caller(http_proc):
    # On the 2025 protocol the server tells only the session that made the change (an executor's), which
    # forwards it to the Supervisor: note_tools_changed is what the Supervisor's tools_changed() runs.
    server = http_proc.config(protocol="legacy")

    async def scenario():
        catalog = ToolCatalog(resolve_tools([server]), [server])
        try:
            await catalog.refresh()
            await _call_from_another_client(http_proc.url, "add_tool", {"name": "thrice"})
            await asyncio.sleep(0.2)
            missed = not catalog.stale()
            note_tools_changed(server.key())
            tools = await catalog.refresh()
            return missed, [t.name for t in tools]
        finally:
            await close_connections()

    missed, names = asyncio.run(scenario())
    assert missed and "thrice" in names


def test_a_call_answered_unknown_tool_marks_the_server_and_the_relisting_drops_the_tool(http_proc):
    server = http_proc.config()

    async def scenario():
        catalog = ToolCatalog(resolve_tools([server]), [server])
        try:
            await catalog.refresh()
            old = ToolRegistry(catalog.tools)
            await old.get("drop_tool").invoke({"name": "population"})  # removed without a notification
            assert not tools_changed(server)
            with pytest.raises(MCPToolError, match="Unknown tool: population"):
                await old.get("population").invoke({"city": "Rome"})
            assert tools_changed(server)
            return [t.name for t in await catalog.refresh()]
        finally:
            await close_connections()

    names = asyncio.run(scenario())
    assert "population" not in names and "slow" in names


def test_a_stdio_server_is_relisted_from_a_fresh_process(tmp_path):
    server = stdio_server(tools_file=tmp_path / "tools.txt", prefix="s")

    async def scenario():
        catalog = ToolCatalog(resolve_tools([server]), [server])
        try:
            assert not catalog.stale(), "a stdio server listed at start-up needs no watch session"
            # An executor's session (here: this process's) calls the tool that adds one, and is told.
            await ToolRegistry(catalog.tools).get("s_add_tool").invoke({"name": "twice"})
            await _until(lambda: catalog.stale(), "the caller's session saw the list change")
            tools = await catalog.refresh()
            return [t.name for t in tools], connection_for(server)._client
        finally:
            await close_connections()

    names, client = asyncio.run(scenario())
    assert "s_twice" in names
    assert client is None, "the re-listing's stdio process was left running"


def test_an_unreachable_server_keeps_its_old_tools_and_is_tried_again(http_proc):
    server = http_proc.config(reconnect_backoff_s=0.01)

    async def scenario():
        catalog = ToolCatalog(resolve_tools([server]), [server])
        old = list(catalog.tools)
        http_proc.stop()
        try:
            got = await catalog.refresh()
            return got, catalog.tools == old, [s.label for s in catalog.stale()]
        finally:
            await close_connections()

    got, unchanged, stale = asyncio.run(scenario())
    assert got is None and unchanged and stale == ["test-http"]


def test_merge_keeps_positions_and_a_clash_keeps_the_old_list(http_proc):
    server = http_proc.config()  # no prefix: its tools can clash with a Python tool

    async def scenario():
        tools = resolve_tools([T.lookup, server, T.subtract])
        catalog = ToolCatalog(tools, [server])
        try:
            await catalog.refresh()
            await _call_from_another_client(http_proc.url, "add_tool", {"name": "lookup"})  # clashes
            await _until(lambda: catalog.stale(), "the watch session saw the list change")
            return tools, await catalog.refresh(), catalog.tools
        finally:
            await close_connections()

    tools, refreshed, current = asyncio.run(scenario())
    assert refreshed is None and current == tools
    fresh = {tools[1].server.key(): tools[1:3]}
    assert [t.name for t in merge_listing(tools, fresh, [tools[1].server])] == \
        [t.name for t in [tools[0], *tools[1:3], tools[-1]]]


def test_the_refresher_applies_a_new_list_once_and_skips_unchanged_servers(http_proc):
    server = http_proc.config()
    applied: list[list[str]] = []

    async def apply(tools):
        applied.append([t.name for t in tools])

    async def scenario():
        refresher = ToolRefresher(ToolCatalog(resolve_tools([server]), [server]), apply)
        try:
            await refresher.current()
            await refresher.current()
            await _call_from_another_client(http_proc.url, "add_tool", {"name": "twice"})
            await _until(lambda: refresher.catalog.stale(), "the watch session saw the list change")
            await refresher.current()
        finally:
            await close_connections()

    asyncio.run(scenario())
    assert len(applied) == 1 and "twice" in applied[0]


def test_a_plan_being_written_keeps_its_catalog_and_the_next_plan_sees_the_new_one():
    old, new = ToolRegistry(T.ALL), ToolRegistry([T.lookup])
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "subtract", {"a": 3, "b": 1}))
    prompts: list[str] = []

    def reply(request):
        prompts.append(" ".join(m["content"] for m in request.messages))
        return plan

    planner = Planner(FunctionLLM(reply, stream_chunk_size=8), old.schemas(), old.catalog_text(),
                      RuntimeConfig(stream_plan=True).planner_options())

    async def scenario():
        items = []
        async for item in planner.plan("t", "task"):
            items.append(item)
            if isinstance(item, StepEmitted) and item.step.step_id == 1:
                planner.use_tools(new.schemas(), new.catalog_text())  # subtract is gone
        second = [item async for item in planner.plan("t2", "task")]
        return items, second

    first, second = asyncio.run(scenario())
    assert isinstance(first[-1], PlanCompleted), first[-1]
    assert len(first[-1].plan.steps) == 2, "the plan under way was validated against the new catalog"
    assert "- subtract(" in prompts[0] and "- subtract(" not in prompts[1], "the next plan's prompt lists old tools"
    assert not isinstance(second[-1], PlanCompleted), "the next plan still accepted the dropped tool"
