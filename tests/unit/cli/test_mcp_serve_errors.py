"""``tetrarch mcp serve`` gives MCP clients tetrarch's own error messages (the SDK's tool-error result), not the
SDK's bare "Error executing tool …". Served from an in-process Orchestrator: nothing here is about Ray."""

from __future__ import annotations

import asyncio

from mcp import Client
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.cli.mcp_serve import build_server
from agents.llm import FunctionLLM


def _text(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def test_tetrarchs_errors_reach_the_client_in_its_own_words(tmp_path):
    llm = FunctionLLM(lambda r: {"router": wire.route("direct", answer="hi")}[r.role])
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")

    async def calls() -> list:
        async with Client(build_server(orch)) as client:
            done = await client.call_tool("run_task", {"task": "say hi"})
            return [await client.call_tool("run_task", {"task": "  "}),
                    await client.call_tool("task_status", {"task_id": "no-such-task"}),
                    await client.call_tool("respond", {"task_id": done.structured_content["task_id"],
                                                       "text": "approve"})]

    try:
        empty, unknown, not_waiting = asyncio.run(calls())
    finally:
        orch.shutdown()
    assert empty.is_error and "task must be a non-empty string" in _text(empty)
    assert unknown.is_error and "no task 'no-such-task'" in _text(unknown)
    assert not_waiting.is_error and "not waiting" in _text(not_waiting)
    for result in (empty, unknown, not_waiting):
        assert "Traceback" not in _text(result)
