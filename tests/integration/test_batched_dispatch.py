"""Steps that become ready together travel to an executor as one batch (``ExecutorActor.run_batch``): each
still finishes, fails and is re-dispatched on its own (local Ray, scripted roles)."""

from __future__ import annotations

import threading

import pytest
from support import tools as T
from support import wire

from agents import Deployment, Orchestrator, RuntimeConfig, ToolPolicy, tool
from agents.llm import ScriptedLLM

pytestmark = pytest.mark.ray


@tool
def big(n: int) -> str:
    """A long text.

    Args:
        n: Its length in characters.
    """
    return "ab " * (n // 3)


@tool
def length(text: str) -> int:
    """The length of a text.

    Args:
        text: Any text.
    """
    return len(text)


def _orch(llm, tmp_path, **cfg):
    return Orchestrator(llm=llm, tools=[*T.ALL, big, length],
                        config=RuntimeConfig(store_path=tmp_path / "s.db", **cfg))


def _script(*steps):
    return ScriptedLLM({"router": [wire.route()], "planner": [wire.plan(*steps)],
                        "reflector": [wire.reflection()]})


def test_a_slow_step_does_not_hold_back_the_others_of_its_batch(ray_session, tmp_path):
    # One executor: all six steps go to it in one batch.
    steps = [wire.step(1, "sleepy", {"seconds": 3.0, "label": "slow"})]
    steps += [wire.step(i, "sleepy", {"seconds": 0.05, "label": f"quick {i}"}) for i in range(2, 7)]
    orch = _orch(_script(*steps), tmp_path, deployment=Deployment(num_executors=1))
    try:
        handle = orch.submit("one slow, five quick")
        recorded = {e.payload.step_id: e.ts for e in handle.events() if e.type == "step_finished"}
        result = handle.result(timeout=120)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    slow = next(s for s in result.steps if s.step_id == 1)
    for sid in range(2, 7):
        # Recorded by the Supervisor while the slow step was still running.
        assert recorded[sid] < slow.finished_at - 1.0, (sid, recorded[sid], slow.finished_at)
    assert [s.output for s in sorted(result.steps, key=lambda s: s.step_id)] == \
        ["slow", *(f"quick {i}" for i in range(2, 7))]


def test_a_large_output_of_a_batch_reaches_its_dependent_by_reference(ray_session, tmp_path):
    steps = [wire.step(1, "big", {"n": 90_000}), wire.step(2, "big", {"n": 30}),
             wire.step(3, "length", {"text": "$step_1_result"}, deps=[1])]
    orch = _orch(_script(*steps), tmp_path, deployment=Deployment(num_executors=1),
                 tools=ToolPolicy(max_output_tokens=200_000))
    try:
        result = orch.run("a large output in a batch", timeout=120)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    outputs = {s.step_id: s.output for s in result.steps}
    assert len(outputs[1]) == 90_000 and outputs[3] == 90_000 and outputs[2] == "ab " * 10


def test_an_executor_killed_mid_batch_costs_each_of_its_steps_a_re_dispatch(ray_session, tmp_path):
    import ray

    # Two executors, four steps: each executor gets a batch of two.
    steps = [wire.step(i, "sleepy", {"seconds": 2.0, "label": f"s{i}"}) for i in range(1, 5)]
    orch = _orch(_script(*steps), tmp_path, deployment=Deployment(num_executors=2))
    try:
        handle = orch.submit("four slow steps")
        victim = ray.get_actor(f"executor-{orch._instance}-0", namespace=orch.config.deployment.namespace)
        killer = threading.Timer(1.0, lambda: ray.kill(victim, no_restart=False))
        killer.start()
        events = list(handle.events())
        result = handle.result(timeout=120)
        killer.join()
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert sorted(s.output for s in result.steps) == ["s1", "s2", "s3", "s4"]
    lost = [e.payload.step_id for e in events if e.type == "step_failed" and e.payload.error_kind == "executor_died"]
    assert len(lost) == 2 and all(e.payload.will_retry for e in events if e.type == "step_failed")
    assert all(s.attempts == 1 for s in result.steps)  # a lost executor spends no retry budget
