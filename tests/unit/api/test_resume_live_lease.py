"""``resume`` of a task still running in another live Orchestrator refuses (the lease is live: its step in
flight would run twice at once) unless forced; a lapsed, released or dead runner's lease is taken as before
(issue 60 item 9)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from agents import Orchestrator, RuntimeConfig, tool
from agents.engine.lease_keeper import lease_name, lease_runner
from agents.errors import TaskLeaseHeldError
from agents.llm import FunctionLLM, LLMRequest
from agents.store import Store
from agents.store.fencing import LEASE_TTL_S, LeaseHolder

GATE = threading.Event()
CALLS: list[str] = []


@tool(permission="read")
def slow_population(city: str) -> float:
    """Population of a city in millions, slowly.

    Args:
        city: English city name.
    """
    CALLS.append(city)
    GATE.wait(20)
    return 2.1


def script(request: LLMRequest) -> str:
    if request.role == "router":
        return json.dumps({"route": "plan", "confidence": 0.9, "reason": "lookup", "answer": None})
    if request.role == "planner":
        return json.dumps({"steps": [{"step_id": 1, "description": "Paris", "tool_name": "slow_population",
                                      "tool_input": {"city": "Paris"}, "depends_on": []}]})
    return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                       "action": "accept", "retry_details": None, "feedback": "", "answer": "2.1 million"})


def _orch(config):
    return Orchestrator(llm=FunctionLLM(script), tools=[slow_population], config=config, runtime="inprocess")


def _wait_for_call(n: int) -> None:
    for _ in range(400):
        if len(CALLS) >= n:
            return
        threading.Event().wait(0.01)
    raise AssertionError("the step never started")


def test_resume_refuses_a_task_another_live_orchestrator_runs_unless_forced(tmp_path):
    GATE.clear()
    CALLS.clear()
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    first, second = _orch(config), _orch(config)
    try:
        task_id = first.submit("Population of Paris?").task_id
        _wait_for_call(1)
        with pytest.raises(TaskLeaseHeldError, match="force=True") as caught:
            second.resume(task_id)
        assert caught.value.task_id == task_id and caught.value.until > 0
        assert len(CALLS) == 1  # the step in flight was not started a second time
        handle = second.resume(task_id, force=True)
        _wait_for_call(2)
        GATE.set()
        assert handle.result(timeout=20).status == "accepted"
    finally:
        GATE.set()
        first.shutdown()
        second.shutdown()


def test_a_shut_down_orchestrators_task_resumes_without_force(tmp_path):
    GATE.clear()
    CALLS.clear()
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    first = _orch(config)
    task_id = first.submit("Population of Paris?").task_id
    _wait_for_call(1)
    threading.Timer(0.2, GATE.set).start()
    first.shutdown()  # its leases are released: nobody runs the task any more
    with _orch(config) as again:
        assert again.resume(task_id).result(timeout=20).status == "accepted"


def test_a_lapsed_or_dead_runners_lease_is_not_live():
    here = socket.gethostname()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    now = 1000.0
    assert lease_runner(LeaseHolder(2, "far:1:ab", now - 1), me="me", now=now) is not None
    assert lease_runner(LeaseHolder(2, "far:1:ab", now - LEASE_TTL_S - 1), me="me", now=now) is None
    assert lease_runner(LeaseHolder(2, f"{here}:{dead}:ab", now - 1), me="me", now=now) is None
    assert lease_runner(LeaseHolder(2, f"{here}:{os.getppid()}:ab", now - 1), me="me", now=now) is not None
    # a Supervisor of this very process whose loop ended (no keeper renews it) is gone too
    assert lease_runner(LeaseHolder(2, f"{here}:{os.getpid()}:ab", now - 1), me="me", now=now) is None
    assert lease_runner(LeaseHolder(2, "revoked: the driver is gone", now - 1), me="me", now=now) is None
    assert lease_runner(LeaseHolder(2, "me", now - 1), me="me", now=now) is None


def test_a_runner_that_lives_with_its_parent_is_gone_once_orphaned():
    """A Ray Supervisor's lease names its raylet (its parent). A driver killed with its private Ray leaves the
    Supervisor's process running for a while, renewing its leases: its parent is no longer the raylet, so a resume
    from a new driver takes the task over at once, as before leases were renewed."""
    here, now = socket.gethostname(), 1000.0
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with_its_parent = f"{here}:{child.pid}:ab:{os.getpid()}"
        assert lease_runner(LeaseHolder(2, with_its_parent, now - 1), me="me", now=now) is not None
        orphaned = f"{here}:{child.pid}:ab:{os.getpid() + 1_000_000}"  # started by a parent it no longer has
        assert lease_runner(LeaseHolder(2, orphaned, now - 1), me="me", now=now) is None
    finally:
        child.kill()
        child.wait()
    assert lease_name(lives_with_parent=True).endswith(f":{os.getppid()}")
    assert lease_name().count(":") == 2


def test_the_store_renews_and_releases_an_owners_leases(tmp_path):
    clock = [100.0]
    store = Store(tmp_path / "t.db", clock=lambda: clock[0])
    try:
        store.create_task("t1", "x", {}, lease_owner="a")
        store.create_task("t2", "x", {}, lease_owner="b")
        clock[0] = 150.0
        assert store.renew_leases("a", ["t1", "t2"]) == 1  # t2 is b's
        assert store.lease_holder("t1") == LeaseHolder(1, "a", 150.0)
        assert store.lease_holder("t2").renewed_at == 100.0
        store.renew_leases("a", [], release=True)
        assert not store.lease_holder("t1").live(150.0)
    finally:
        store.close()
