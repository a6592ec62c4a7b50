"""``cancel_task`` on tetrarch's MCP server (issue 62, item 3): a client stops a task another of its calls is
running (``run_task`` then returns the cancelled outcome); a second cancel, or one of a finished task, changes
nothing and says so; an unknown id is the client's error to read. Served from an in-process Orchestrator."""

from __future__ import annotations

import asyncio
import json

from mcp import Client

from agents import Orchestrator, RuntimeConfig, tool
from agents.cli.mcp_serve import build_server
from agents.llm import FunctionLLM, LLMRequest
from agents.store import Store


@tool(permission="read")
async def feed(label: str) -> str:
    """Waits a minute for a slow feed, then echoes the label.

    Args:
        label: Text to return.
    """
    await asyncio.sleep(60)
    return label


def _script(request: LLMRequest) -> str:
    if request.role == "router":
        return json.dumps({"route": "plan", "confidence": 0.9, "reason": "a feed", "answer": None})
    return json.dumps({"steps": [{"step_id": 1, "description": "the feed", "tool_name": "feed",
                                  "tool_input": {"label": "fed"}, "depends_on": []}]})


def _text(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


async def _running_task_id(store_path) -> str:
    for _ in range(400):
        with Store(store_path) as store:
            rows = store.list_tasks(status="running")
        if rows:
            return rows[0].task_id
        await asyncio.sleep(0.02)
    raise AssertionError("run_task never started a task")


def test_cancel_task_stops_a_running_task_and_is_idempotent(tmp_path):
    orch = Orchestrator(llm=FunctionLLM(_script), tools=[feed],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")

    async def calls():
        async with Client(build_server(orch)) as client:
            running = asyncio.ensure_future(client.call_tool("run_task", {"task": "read the feed"}))
            task_id = await _running_task_id(tmp_path / "t.db")
            first = await client.call_tool("cancel_task", {"task_id": task_id})
            ran = await asyncio.wait_for(running, 10)
            again = await client.call_tool("cancel_task", {"task_id": task_id})
            unknown = await client.call_tool("cancel_task", {"task_id": "no-such-task"})
            return first, ran, again, unknown

    try:
        first, ran, again, unknown = asyncio.run(calls())
    finally:
        orch.shutdown()
    assert not first.is_error
    out = first.structured_content
    assert out["status"] == "cancelled" and "cancelled by MCP" in out["note"]
    assert "cancelled by MCP" in out["error"]
    assert ran.structured_content["status"] == "cancelled"  # the run_task call ended with the cancel
    second = again.structured_content
    assert second["status"] == "cancelled" and "already cancelled" in second["note"]
    assert unknown.is_error and "no task 'no-such-task'" in _text(unknown)
    assert "Traceback" not in _text(unknown)
