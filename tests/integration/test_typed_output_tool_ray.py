"""The hosted typed review's final tool call on Ray (tests/unit/llm/test_typed_output_channel.py in-process): the
reviewer's actor offers ``final_result`` through its copy of ``OpenAIChat``, the answer streams as the output's JSON,
and a server that rejects tools is remembered by that copy (one rejected request for two tasks)."""

from __future__ import annotations

from typing import Any

import pytest
from support import wire
from support.hosted_flows import _role_of as role_of
from support.tools import lookup, subtract

from agents import Orchestrator, RuntimeConfig
from agents.llm import OpenAIChat
from agents.llm.fake_server import FakeOpenAIServer, FakeReply, FakeToolCall, Fault

pytestmark = pytest.mark.ray

TASK = "Which is bigger, Paris or Rome?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))
CITIES = ["Rome", "Paris"]


def model(body: dict[str, Any]) -> str | FakeReply:
    role = role_of(body)
    if role != "reflector":
        return {"router": wire.route(), "planner": PLAN}[role]
    if body.get("tools"):
        return FakeReply("accept 5 5 5", [FakeToolCall("final_result", {"response": CITIES})])
    return 'accept 5 5 5\nanswer: ["Rome", "Paris"]'


def test_the_final_tool_call_and_its_fallback_on_ray(ray_session, tmp_path) -> None:
    with FakeOpenAIServer(responder=model, stream_chunk_chars=4) as server:
        llm = OpenAIChat("hosted-model", base_url=server.base_url, api_key="sk-fake", max_retries=0)
        orch = Orchestrator(llm=llm, tools=[lookup, subtract], runtime="ray",
                            config=RuntimeConfig(store_path=tmp_path / "t.db", task_timeout_s=120))
        try:
            handle = orch.submit(TASK, output_type=list[str])
            pieces = [p for p in handle.stream_answer() if isinstance(p, str)]
            first = handle.result(timeout=120)
            server.inject(Fault.reject_tools(times=None))
            after = [orch.run(TASK, output_type=list[str], timeout=120) for _ in range(2)]
        finally:
            orch.shutdown()
        reviews = [b for b in server.requests if role_of(b) == "reflector"]
    assert first.status == "accepted" and first.output == CITIES, (first.error, first.question)
    assert "".join(pieces) == first.answer == '["Rome", "Paris"]'
    assert [r.output for r in after] == [CITIES, CITIES]
    assert [bool(b.get("tools")) for b in reviews] == [True, True, False, False]  # the 2nd rejected, then remembered
