"""`make test`'s one Ray module: whole tasks through the actors (Supervisor, router, planner, executors and
reviewer on a local Ray), with live events and an escalation answered across processes.
Every other Ray test runs in `make test-all` (docs/testing.md)."""

from __future__ import annotations

import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.llm import ScriptedLLM

pytestmark = [pytest.mark.ray, pytest.mark.smoke]


def _orchestrator(llm, store) -> Orchestrator:
    return Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=store), runtime="ray")


def test_a_task_runs_through_the_actors_with_live_events(ray_session, tmp_path):
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                     wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    orch = _orchestrator(llm, tmp_path / "t.db")
    try:
        handle = orch.submit("Which is bigger, Paris or Rome, and by how much?")
        seen = [event.type for event in handle.events()]
        result = handle.result(timeout=120)
        names = [name["name"] for name in ray_session.util.list_named_actors(all_namespaces=True)]
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [step.output for step in result.steps] == [2.1, 2.8, 0.7]
    assert result.usage.total.llm_calls == 3
    assert seen[0] == "task_submitted" and seen[-1] == "task_finished" and seen.count("step_finished") == 3
    assert any(name.startswith("executor-") for name in names), names  # the steps ran in executor actors


def test_an_escalated_write_waits_for_approval_then_runs_once(ray_session, tmp_path):
    T.reset("delete-r9")
    plan = wire.plan(wire.step(1, "delete_record", {"record_id": "r9"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer="deleted")]})
    orch = _orchestrator(llm, tmp_path / "t.db")
    try:
        first = orch.submit("delete record r9").result(timeout=120)
        assert first.status == "escalated" and first.stopped_reason == "needs_confirmation"
        assert T.count("delete-r9") == 0
        final = orch.respond(first.task_id, "approve").result(timeout=120)
    finally:
        orch.shutdown()
    assert final.status == "accepted" and final.answer == "deleted"
    assert T.count("delete-r9") == 1
