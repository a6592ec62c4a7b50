"""The crash matrix (issue 19, part 3): a chain and a fan-out of write tools, the driver's whole process group
SIGKILLed at each step boundary and mid-step, resumed from a new process (this one); then the Supervisor actor
killed, and an executor killed. Every step that had completed wrote exactly once, the step in flight at most
twice (once when its tool takes the idempotency key), the task ends accepted, and the log is causal.

Each kill runs the driver in a subprocess with its own private local Ray (as a user's script would); the
resumes share one Orchestrator on this module's Ray, against the one store every driver wrote.
"""

from __future__ import annotations

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
MATRIX = [
    ("chain", "append_tag", "mid 1"), ("chain", "append_tag", "after 1"),
    ("chain", "append_tag", "mid 2"), ("chain", "append_tag", "after 2"),
    ("chain", "append_tag", "mid 3"), ("chain", "append_tag", "after 3"),
    ("chain", "append_tag", "mid 4"),
    ("fanout", "append_tag", "mid 1"), ("fanout", "append_tag", "after 1"),
    ("fanout", "append_tag", "mid 2"), ("fanout", "append_tag", "after 2"),
    ("fanout", "append_tag", "mid 5"),
    ("chain", "append_tag_keyed", "mid 2"), ("chain", "append_tag_keyed", "mid 4"),
]
STEPS = {"chain": 4, "fanout": 5}
DEPS = {"chain": {2: [1], 3: [2], 4: [3]}, "fanout": {2: [1], 3: [1], 4: [1], 5: [2, 3, 4]}}


@pytest.fixture(scope="module")
def shared(ray_session, tmp_path_factory):
    """One store for every driver, and one Orchestrator (this process) that resumes their tasks."""
    root = tmp_path_factory.mktemp("matrix")
    store = root / "matrix.db"
    # Any plan: a resumed task's plan comes from its checkpoint, and the reflector's reply is the same for all.
    llm = FunctionLLM(crash_tools.script(crash_tools.plan("chain", str(root / "unused"), SECONDS)))
    orch = Orchestrator(llm=llm, tools=crash_tools.TOOLS, config=RuntimeConfig(store_path=store, num_executors=4))
    yield root, store, orch
    orch.shutdown()


def _drive_and_kill(store: Path, shape: str, tags_file: Path, tool: str, when: str) -> str:
    """Start a driver, SIGKILL its process group at ``when``; returns the task id."""
    kind, step = when.split()
    proc = subprocess.Popen([sys.executable, str(HERE / "driver_script.py"), str(store), "--plan", shape,
                             str(tags_file), str(SECONDS), tool],
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


@pytest.mark.parametrize(("shape", "tool", "when"), MATRIX, ids=[f"{s}-{t}-{w.replace(' ', '')}" for s, t, w in MATRIX])
def test_driver_killed_then_resumed_writes_each_completed_step_once(shared, shape, tool, when):
    root, store, orch = shared
    tags_file = root / f"{shape}-{tool}-{when.replace(' ', '')}.tags"
    task_id = _drive_and_kill(store, shape, tags_file, tool, when)
    result = orch.resume(task_id).result(timeout=180)
    assert result.status == "accepted", result.error
    assert [s.status for s in result.steps] == ["completed"] * STEPS[shape]
    writes = Counter(crash_tools.tags(tags_file))
    assert set(writes) == {f"t{i}" for i in range(1, STEPS[shape] + 1)}, writes
    twice = [tag for tag, n in writes.items() if n > 1]
    assert all(n <= 2 for n in writes.values()), writes
    if tool == "append_tag_keyed":
        assert not twice, f"a write that takes its key ran twice: {writes}"
    else:
        # At most the steps in flight at the kill ran twice: one in a chain, the parallel branches of a fan-out.
        in_flight_max = 1 if shape == "chain" else 3
        assert len(twice) <= in_flight_max, writes
    _assert_causal(_events(store, task_id), DEPS[shape])


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
                        config=RuntimeConfig(store_path=tmp_path / "a.db", num_executors=2))
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
