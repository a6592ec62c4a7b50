"""The crash matrix (issue 19, part 3): a chain and a fan-out of write tools, the driver's whole process group
SIGKILLed at each step boundary and mid-step, resumed from a new process (this one); then the Supervisor actor
killed, and an executor killed. Every step that had completed wrote exactly once, the step in flight at most
twice (once when its tool takes the idempotency key), the task ends accepted, and the log is causal.

Each kill runs the driver in a subprocess with its own private local Ray (as a user's script would); the
resumes share one Orchestrator on this module's Ray, against the one store every driver wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support import crash_tools

from agents import Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM

pytestmark = pytest.mark.ray

HERE = Path(__file__).parent
SECONDS = 1.0
"""How long each step works after its write: the window a mid-step kill lands in."""

# (shape, tool, kill when): "mid N" = tag tN is in the file (step N wrote and is still working);
# "after N" = the driver saw step N's step_finished (the boundary between N and its dependents).
# CI runs one point of each kind (first / middle boundary / last step, a fan-out branch done with others in
# flight, the join in flight, a tool that takes the key); `-m slow` runs every boundary and every mid-step.
_SLOW = pytest.mark.slow
MATRIX = [
    pytest.param("chain", "append_tag", "mid 1"),
    pytest.param("chain", "append_tag", "after 1", marks=_SLOW),
    pytest.param("chain", "append_tag", "mid 2", marks=_SLOW),
    pytest.param("chain", "append_tag", "after 2"),
    pytest.param("chain", "append_tag", "mid 3", marks=_SLOW),
    pytest.param("chain", "append_tag", "after 3", marks=_SLOW),
    pytest.param("chain", "append_tag", "mid 4"),
    pytest.param("fanout", "append_tag", "mid 1", marks=_SLOW),
    pytest.param("fanout", "append_tag", "after 1", marks=_SLOW),
    pytest.param("fanout", "append_tag", "mid 2", marks=_SLOW),
    pytest.param("fanout", "append_tag", "after 2"),
    pytest.param("fanout", "append_tag", "mid 5"),
    pytest.param("chain", "append_tag_keyed", "mid 2"),
    pytest.param("chain", "append_tag_keyed", "mid 4", marks=_SLOW),
]
STEPS = {"chain": 4, "fanout": 5}
DEPS = {"chain": {2: [1], 3: [2], 4: [3]}, "fanout": {2: [1], 3: [1], 4: [1], 5: [2, 3, 4]}}


@pytest.fixture(scope="module")
def shared(ray_session, tmp_path_factory):
    """One store for every driver, and one Orchestrator (this process) that resumes their tasks."""
    import ray

    root = tmp_path_factory.mktemp("matrix")
    store = root / "matrix.db"
    # A task killed before its plan reached the store is planned again: the planner reads the plan from the task.
    orch = Orchestrator(llm=FunctionLLM(crash_tools.replanning_script), tools=crash_tools.TOOLS,
                        config=RuntimeConfig(store_path=store, deployment={"num_executors": 4}))
    yield root, store, orch, ray.get_runtime_context().gcs_address
    orch.shutdown()


def _drive_and_kill(store: Path | str, shape: str, tags_file: Path, tool: str, when: str, ray_address: str | None,
                    seconds: float | str = SECONDS) -> str:
    """Start a driver (on the Ray at ``ray_address``; None: its own private local Ray), SIGKILL its process
    group at ``when``; returns the task id."""
    kind, step = when.split()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    if ray_address is not None:
        env["RAY_ADDRESS"] = ray_address
    proc = subprocess.Popen([sys.executable, str(HERE / "driver_script.py"), str(store), "--plan", shape,
                             str(tags_file), str(seconds), tool], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        task_id = _read_until(proc, lambda line: line.startswith("TASK "), 180).split()[1]
        if kind == "after":
            _read_until(proc, lambda line: line == f"FINISHED {step}", 120)
        else:
            deadline = time.monotonic() + 120
            while f"t{step}" not in crash_tools.tags(tags_file):
                assert time.monotonic() < deadline, f"step {step} never wrote its tag"
                time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return task_id


def _read_until(proc: subprocess.Popen, match, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        if match(line):
            return line
        assert line or proc.poll() is None, "the driver exited early"
    raise AssertionError("the driver never reported what the test waits for")


def _assert_causal(events, deps: dict[int, list[int]]) -> None:
    """Every step_started of a step comes after the step_finished of each step it depends on (by seq)."""
    finished: dict[int, int] = {}
    for event in events:
        if event.type == "step_finished":
            finished.setdefault(event.payload.step_id, event.seq)
        elif event.type == "step_started":
            for dep in deps.get(event.payload.step_id, []):
                assert dep in finished and finished[dep] < event.seq, (
                    f"step_started {event.payload.step_id} (seq {event.seq}) before step_finished {dep}")


@pytest.mark.parametrize(("shape", "tool", "when"), MATRIX,
                         ids=[f"{p.values[0]}-{p.values[1]}-{p.values[2].replace(' ', '')}" for p in MATRIX])
def test_driver_killed_then_resumed_writes_each_completed_step_once(shared, shape, tool, when):
    root, store, orch, address = shared
    _kill_resume_and_check(root, store, orch, shape, tool, when, address)


def test_the_issue_scenario_private_ray_killed_at_t3(shared):
    """Issue 19 as reported: the driver's whole process group, with its private local Ray, SIGKILLed as soon as
    t3 is in the file; Ray's workers outlive it for a moment. It used to end ``t1 t2 t3 t4 t4``."""
    root, store, orch, _ = shared
    _kill_resume_and_check(root, store, orch, "chain", "append_tag", "mid 3", None)


def _kill_resume_and_check(root: Path, store: Path, orch: Orchestrator, shape: str, tool: str, when: str,
                           address: str | None) -> None:
    tags_file = root / f"{shape}-{tool}-{when.replace(' ', '')}-{address is None}.tags"
    task_id = _drive_and_kill(store, shape, tags_file, tool, when, address)
    completed = _completed_in_store(store, task_id)
    result = orch.resume(task_id).result(timeout=180)
    assert result.status == "accepted", result.error
    assert [s.status for s in result.steps] == ["completed"] * STEPS[shape], [
        (s.step_id, s.status, s.error) for s in result.steps]  # the errors say why, should this ever fail
    writes = Counter(crash_tools.tags(tags_file))
    assert set(writes) == {f"t{i}" for i in range(1, STEPS[shape] + 1)}, writes
    assert all(writes[f"t{sid}"] == 1 for sid in completed), f"a step the store held completed ran again: {writes}"
    twice = [tag for tag, n in writes.items() if n > 1]
    assert all(n <= 2 for n in writes.values()), writes
    if tool == "append_tag_keyed":
        assert not twice, f"a write that takes its key ran twice: {writes}"
    else:
        # At most the steps in flight at the kill ran twice: one in a chain, the parallel branches of a fan-out.
        in_flight_max = 1 if shape == "chain" else 3
        assert len(twice) <= in_flight_max, writes
    _assert_causal(_events(store, task_id), DEPS[shape])
    _report(f"driver {'private Ray' if address is None else 'on shared Ray'}", shape, tool, when, writes,
            result.status, completed)


def _report(kill: str, shape: str, tool: str, when: str, writes: Counter, status: str,
            completed: list[int] | None = None) -> None:
    """One line per crash point for docs/reliability.md, when TETRARCH_CRASH_REPORT names a file."""
    target = os.environ.get("TETRARCH_CRASH_REPORT")
    if target:
        with open(target, "a") as f:
            f.write(json.dumps({"kill": kill, "shape": shape, "tool": tool, "when": when,
                                "writes": dict(sorted(writes.items())), "status": status,
                                "completed_in_store_at_kill": sorted(completed or [])}) + "\n")


def _completed_in_store(store: Path, task_id: str) -> list[int]:
    from agents.store import Store

    with Store(store) as s:
        state = s.load_checkpoint(task_id) or {}
    return [int(sid) for sid, rec in state.get("steps", {}).items() if rec["status"] == "completed"]


def _events(store: Path, task_id: str):
    from agents.store import Store

    with Store(store) as s:
        return s.events(task_id)


def _submit_and_wait_for_tag(orch: Orchestrator, tags_file: Path, step: int):
    handle = orch.submit("write the tags")
    deadline = time.monotonic() + 120
    while f"t{step}" not in crash_tools.tags(tags_file):
        assert time.monotonic() < deadline, f"step {step} never wrote its tag"
        time.sleep(0.01)
    return handle


@pytest.mark.parametrize("victim", ["supervisor", "executor"])
def test_an_actor_killed_mid_write_costs_no_extra_write(ray_session, tmp_path, victim):
    """The Supervisor restarts and takes the task over (the old executors finish the step in flight and record
    it; the new runner uses that record); an executor's step goes to another executor, which takes the claim."""
    import ray

    tags_file = tmp_path / "actor.tags"
    plan = crash_tools.plan("chain", str(tags_file), SECONDS)
    orch = Orchestrator(llm=FunctionLLM(crash_tools.script(plan)), tools=crash_tools.TOOLS,
                        config=RuntimeConfig(store_path=tmp_path / "a.db", deployment={"num_executors": 2}))
    try:
        handle = _submit_and_wait_for_tag(orch, tags_file, 2)
        if victim == "supervisor":
            ray.kill(orch._supervisor, no_restart=False)
        else:
            load = ray.get(orch._supervisor.executor_load.remote())  # steps in flight per executor
            busy = orch._actors.executors[max(range(len(load)), key=lambda i: load[i])]
            os.kill(ray.get(busy.pid.remote()), signal.SIGKILL)
        result = handle.result(timeout=180)
        events = _events(tmp_path / "a.db", handle.task_id)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    writes = Counter(crash_tools.tags(tags_file))
    assert set(writes) == {"t1", "t2", "t3", "t4"}, writes
    assert writes["t1"] == writes["t3"] == writes["t4"] == 1, writes
    assert writes["t2"] <= (1 if victim == "supervisor" else 2), writes
    _assert_causal(events, DEPS["chain"])
    _report(f"{victim} actor", "chain", "append_tag", "mid 2", writes, result.status)
