"""Speculated reads on Ray: a task of a cached shape gets its lookup from the call started at submit, in an executor
actor, before the router answered — one tool call, the step recorded as usual and marked speculative."""

from __future__ import annotations

import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest

pytestmark = pytest.mark.ray


def roles(request: LLMRequest) -> str:
    text = request.messages[-1]["content"]
    if request.role == "router":
        return wire.route()
    if request.role == "reflector":
        return wire.reflection(answer="Rome has 2.8 million people." if "Rome" in text else
                               "Paris has 2.1 million people.")
    return wire.plan(wire.step(1, "lookup", {"city": "Paris"}, description="population of Paris"))


def test_a_cached_shape_s_lookup_is_served_by_the_call_started_at_submit(ray_session, tmp_path):
    T.reset("lookup-rome")
    orch = Orchestrator(llm=FunctionLLM(roles), tools=T.ALL,
                        config=RuntimeConfig(store_path=tmp_path / "t.db", plan_cache=True))
    try:
        seed = orch.run("What is the population of Paris?", timeout=120)
        assert seed.status == "accepted"
        handle = orch.submit("What is the population of Rome?")
        result = handle.result(timeout=120)
        events = list(handle.events())
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.steps[0].output == 2.8
    assert result.usage.by_role.get("planner") is None or result.usage.by_role["planner"].llm_calls == 0
    finished = [e.payload for e in events if e.type == "step_finished"]
    assert [(p.step_id, p.speculative) for p in finished] == [(1, True)]
    assert T.count("lookup-rome") == 1  # served, not called again
