"""MCP's ``run_task`` with an ``output_schema``: the answer comes back as JSON data valid under it, repaired once
when it is not. Served from an in-process Orchestrator."""

from __future__ import annotations

import asyncio
import json

from mcp import Client
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.cli.mcp_serve import build_server
from agents.llm import FunctionLLM

SCHEMA = {"type": "object", "properties": {"bigger": {"type": "string"}, "by": {"type": "number"}},
          "required": ["bigger", "by"]}
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))


def test_run_task_returns_json_valid_under_the_schema(tmp_path):
    answers = [json.dumps({"bigger": "Rome"}), json.dumps({"bigger": "Rome", "by": 0.7})]
    seen: list = []

    def reply(request):
        if request.role == "reflector":
            seen.append(request.messages[-1]["content"])
            return wire.reflection(answer=answers.pop(0))
        return {"router": wire.route(), "planner": PLAN}[request.role]

    orch = Orchestrator(llm=FunctionLLM(reply), tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        runtime="inprocess")

    async def calls():
        async with Client(build_server(orch)) as client:
            return (await client.call_tool("run_task", {"task": "Which is bigger, Paris or Rome?",
                                                        "output_schema": SCHEMA}),
                    await client.call_tool("run_task", {"task": "x", "output_schema": {"type": 5}}))

    try:
        done, bad = asyncio.run(calls())
    finally:
        orch.shutdown()
    assert done.structured_content["status"] == "accepted"
    assert done.structured_content["output"] == {"bigger": "Rome", "by": 0.7}
    assert "'by' is a required property" in seen[1]  # the repair round named the missing field
    assert bad.is_error and "not a JSON schema" in " ".join(getattr(p, "text", "") for p in bad.content)
