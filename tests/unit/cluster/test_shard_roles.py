"""``ShardRolesRuntime`` (``roles_in_supervisors``): role calls go to role objects in the shard's process, with the
shard's tool list, and a changed tool list reaches them; no Ray session is needed for any of it."""

from __future__ import annotations

import asyncio

from support import tools as T
from support import wire

from agents.cluster.shard_roles import ShardRolesRuntime
from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.roles.messages import StepEmitted
from agents.tools import ToolRegistry


def _runtime(seen: list) -> ShardRolesRuntime:
    plan = wire.plan(wire.step(1, "lookup", {"city": "Rome"}))

    def reply(request):
        seen.append((request.role, request.messages[0]["content"]))
        return {"router": wire.route(), "planner": plan, "reflector": wire.reflection(answer="ok")}[request.role]

    registry = ToolRegistry(T.ALL)
    return ShardRolesRuntime(FunctionLLM(reply), T.ALL, RuntimeConfig(), [], {t.name: t.spec for t in registry})


def test_route_plan_and_review_are_calls_in_this_process():
    seen: list = []
    runtime = _runtime(seen)

    async def flow():
        decision = (await runtime.route("t1", "population of Rome")).value
        items = [item async for item in runtime.plan("t1", "population of Rome", None)]
        return decision, items

    decision, items = asyncio.run(flow())
    assert decision.route == "plan"
    assert [i.step.tool_name for i in items if isinstance(i, StepEmitted)] == ["lookup"]
    assert [role for role, _ in seen] == ["router", "planner"]
    assert runtime.tool_spec("lookup") is not None and runtime.tool_spec("nope") is None


def test_a_new_tool_list_reaches_the_shards_roles():
    seen: list = []
    runtime = _runtime(seen)
    only_lookup = [t for t in ToolRegistry(T.ALL) if t.name == "lookup"]
    asyncio.run(runtime.use_tools(only_lookup))
    asyncio.run(runtime.route("t2", "population of Rome"))
    prompt = seen[-1][1]
    assert "lookup" in prompt and "append_note" not in prompt
    assert runtime.tool_spec("append_note") is None
