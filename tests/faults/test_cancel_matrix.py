"""The cancel matrix (issue 62): the crash matrix's harness (a driver process running a chain or a fan-out of
write tools, ``driver_script.py``; the tags file counts each tool's side effects) with a cancel instead of a
kill, at each kind of point: before the first step (the router's or the planner's call under way), mid-step
(a write tool has written and still works), between steps (the driver saw a step finish), and during the
reviewer's call; asked by the driver itself (``handle.cancel``) or by another process through the store
(this one, ``cancel_in_store``); on SQLite and PostgreSQL, in process and on Ray (the driver joins this
worker's Ray, as the crash matrix's do).

Once the cancel's outcome is back: the log ends with the cancelled ``task_finished`` naming who cancelled, and
for longer than the lease watch and the abandoned tool's remaining work nothing more is stored (event seq and
checkpoint version unchanged) and no side effect is added; a side effect exists only for a step that had
started before the cancel, and every step that started is recorded finished or cancelled. Then
``orch.resume`` from this process ends the task accepted and runs no completed step again.

The in-flight write (its tool had written and was still working): the tool is abandoned, not killed, so its
side effect stands; its step is recorded cancelled (never completed), and what the abandoned call returns
later is not stored. A resume runs that step again: a write that takes its idempotency key applies once in
all; a plain write may apply twice, as after a crash (docs/reliability.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import crash_tools
from test_crash_matrix import DEPS, STEPS, _assert_causal, _read_until

from agents import Orchestrator, RuntimeConfig
from agents.engine.lease_keeper import WATCH_S
from agents.engine.store_cancel import cancel_in_store
from agents.llm import FunctionLLM
from agents.results import CancelOutcome
from agents.store import Store

pytestmark = pytest.mark.subprocess

HERE = Path(__file__).parent
QUICK_S = 0.1
"""Each step's work after its write..."""
HELD_S = 1.5
"""...but the step a mid-step cancel lands in works this long: the cancel comes while it does."""
WAIT_S = max(HELD_S, 2 * WATCH_S) + 0.7
"""How long nothing may be stored after the outcome: past the lease watch of the runner elsewhere and past the
end of the abandoned tool's work (what it returns then must not be stored)."""
SAME, OTHER = "the driver", "another process"


@dataclass(frozen=True)
class Case:
    backend: str  # "sqlite" | "postgresql"
    runtime: str  # "inprocess" | "ray"
    shape: str  # "chain" | "fanout"
    tool: str  # "append_tag" | "append_tag_keyed"
    point: str  # "route" | "before" (the router's / the planner's call) | "mid N" | "after N" | "review"
    by: str  # SAME | OTHER

    def marks(self) -> list[pytest.MarkDecorator]:
        return ([pytest.mark.postgres] if self.backend == "postgresql" else []) + (
            [pytest.mark.ray] if self.runtime == "ray" else [])

    def id(self) -> str:
        who = "same" if self.by == SAME else "other"
        return "-".join([self.backend, self.runtime, self.shape, self.tool, self.point.replace(" ", ""), who])


def _cases() -> list:
    """CI runs a subset that has each point, each tool, both shapes, both backends and both callers at least
    twice, and Ray once; `-m slow` (make test-slow) runs every point on every backend and caller."""
    ci = [Case("sqlite", "inprocess", "chain", "append_tag", "before", SAME),
          Case("sqlite", "inprocess", "chain", "append_tag", "mid 2", OTHER),
          Case("sqlite", "inprocess", "chain", "append_tag_keyed", "mid 3", SAME),
          Case("sqlite", "inprocess", "fanout", "append_tag", "after 1", SAME),
          Case("sqlite", "inprocess", "chain", "append_tag", "review", OTHER),
          Case("postgresql", "inprocess", "chain", "append_tag_keyed", "mid 2", OTHER),
          Case("postgresql", "inprocess", "fanout", "append_tag", "mid 3", SAME),
          Case("postgresql", "inprocess", "chain", "append_tag", "review", SAME),
          Case("postgresql", "inprocess", "chain", "append_tag", "before", OTHER),
          # One on Ray (a driver's actors cost tens of seconds on a loaded machine); test_cancel_ray.py cancels
          # on Ray from the driver and from another process too.
          Case("postgresql", "ray", "chain", "append_tag_keyed", "mid 2", OTHER)]
    slow = [Case(backend, "inprocess", shape, "append_tag", point, by)
            for backend in ("sqlite", "postgresql") for by in (SAME, OTHER)
            for shape, points in (("chain", ("route", "before", "mid 1", "after 1", "mid 4", "after 3",
                                             "review")),
                                  ("fanout", ("mid 1", "after 1", "mid 2", "mid 5", "review")))
            for point in points]
    slow += [Case(backend, "ray", "chain", "append_tag", point, by) for backend in ("sqlite", "postgresql")
             for by in (SAME, OTHER) for point in ("before", "mid 3", "review")]
    slow += [Case("sqlite", "ray", "chain", "append_tag_keyed", "mid 2", SAME),
             Case("postgresql", "ray", "fanout", "append_tag", "after 1", OTHER)]
    slow = [case for case in slow if case not in ci]
    return [pytest.param(c, marks=c.marks(), id=c.id()) for c in ci] + [
        pytest.param(c, marks=[*c.marks(), pytest.mark.slow], id=c.id()) for c in slow]


@pytest.mark.parametrize("case", _cases())
def test_nothing_starts_or_is_written_after_a_cancel_and_resume_writes_each_completed_step_once(
        tmp_path, request, case: Case):
    sqlite = case.backend == "sqlite"
    store = str(tmp_path / "cancel.db") if sqlite else request.getfixturevalue("postgres_url")
    where = {"store_path": store} if sqlite else {"store_url": store}
    tags_file = tmp_path / "tags"
    # A Ray driver joins this worker's Ray, as the crash matrix's do (a private Ray each costs a start-up).
    address = request.getfixturevalue("ray_session").get_runtime_context().gcs_address \
        if case.runtime == "ray" else None
    proc = _start_driver(store, case, tags_file, address)
    try:
        task_id = _read_until(proc, lambda line: line.startswith("TASK "), 180).split()[1]
        _wait_for_point(proc, case, tags_file)
        outcome = _cancel(proc, case, task_id, RuntimeConfig(**where))
        assert (outcome.cancelled, outcome.status, outcome.task_id) == (True, "cancelled", task_id), outcome
        _check_nothing_after(store, task_id, tags_file, case)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    completed = _completed(store, task_id)
    cancelled_in_flight = _cancelled_steps(store, task_id)
    orch = Orchestrator(llm=FunctionLLM(crash_tools.replanning_script), tools=crash_tools.TOOLS,
                        config=RuntimeConfig(**where, deployment={"num_executors": 4}), runtime="inprocess")
    try:
        result = orch.resume(task_id).result(timeout=120)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    assert [s.status for s in result.steps] == ["completed"] * STEPS[case.shape], [
        (s.step_id, s.status, s.error) for s in result.steps]
    writes = Counter(crash_tools.tags(tags_file))
    assert set(writes) == {f"t{i}" for i in range(1, STEPS[case.shape] + 1)}, writes
    assert all(writes[f"t{sid}"] == 1 for sid in completed), f"a completed step ran again: {writes}"
    if case.tool == "append_tag_keyed":
        assert all(n == 1 for n in writes.values()), f"a write that takes its key applied twice: {writes}"
    else:  # only a write in flight at the cancel (abandoned, its side effect done) may apply again
        assert all(n == 1 for tag, n in writes.items() if int(tag[1:]) not in cancelled_in_flight), writes
        assert all(n <= 2 for n in writes.values()), writes
    with Store(store) as s:
        _assert_causal(s.events(task_id), DEPS[case.shape])


def _start_driver(store: str, case: Case, tags_file: Path, ray_address: str | None) -> subprocess.Popen:
    """The task's driver (on the Ray at ``ray_address`` for ``runtime="ray"``); the step a mid-step cancel
    lands in works ``HELD_S``, the others ``QUICK_S``."""
    kind, _, step = case.point.partition(" ")
    seconds = ",".join(str(HELD_S if kind == "mid" and int(step) == i else QUICK_S)
                       for i in range(1, STEPS[case.shape] + 1))
    hold = {"before": ["--hold", "planner"], "route": ["--hold", "router"],
            "review": ["--hold", "reflector"]}.get(kind, [])
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    if ray_address is not None:
        env["RAY_ADDRESS"] = ray_address
    return subprocess.Popen([sys.executable, str(HERE / "driver_script.py"), store, "--plan", case.shape,
                             str(tags_file), seconds, case.tool, "--runtime", case.runtime, *hold,
                             "--executors", "2" if case.runtime == "ray" else "4"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)


def _wait_for_point(proc: subprocess.Popen, case: Case, tags_file: Path) -> None:
    kind, _, step = case.point.partition(" ")
    if kind == "after":
        _read_until(proc, lambda line: line == f"FINISHED {step}", 120)
        return
    done = {"before": lambda: Path(f"{tags_file}.held").exists(),
            "route": lambda: Path(f"{tags_file}.held").exists(),
            "review": lambda: Path(f"{tags_file}.held").exists(),
            "mid": lambda: f"t{step}" in crash_tools.tags(tags_file)}[kind]
    deadline = time.monotonic() + 120
    while not done():
        assert time.monotonic() < deadline, f"the task never reached the cancel point {case.point!r}"
        assert proc.poll() is None, "the driver exited early"
        time.sleep(0.01)


def _cancel(proc: subprocess.Popen, case: Case, task_id: str, config: RuntimeConfig) -> CancelOutcome:
    if case.by == OTHER:
        return cancel_in_store(config, task_id, by=OTHER)
    proc.stdin.write(f"CANCEL {SAME}\n")
    proc.stdin.flush()
    line = _read_until(proc, lambda line: line.startswith("OUTCOME "), 60)
    return CancelOutcome.model_validate_json(line.removeprefix("OUTCOME "))


def _check_nothing_after(store: str, task_id: str, tags_file: Path, case: Case) -> None:
    """Nothing stored, and no side effect, from the outcome on; the record says who cancelled and which steps
    had started; a side effect only for those."""
    with Store(store) as s:
        before = (s.last_seq(task_id), s.checkpoint_version(task_id))
        tags_at_outcome = crash_tools.tags(tags_file)
        time.sleep(WAIT_S)
        after = (s.last_seq(task_id), s.checkpoint_version(task_id))
        events, state = s.events(task_id), s.load_checkpoint(task_id)
    assert after == before, f"the cancelled run stored more after the cancel's outcome: {before} -> {after}"
    tags = crash_tools.tags(tags_file)
    assert tags == tags_at_outcome, f"a side effect after the cancel's outcome: {tags_at_outcome} -> {tags}"
    last = events[-1]
    assert last.type == "task_finished" and (last.payload.status, last.payload.cancelled_by) == (
        "cancelled", case.by), last
    assert (state["status"], state["stopped_reason"], state["cancelled"]["by"]) == (
        "cancelled", "cancelled", case.by)
    started = {e.payload.step_id for e in events if e.type == "step_started"}
    assert started == _expected_started(case, started), f"started by a cancel at {case.point}: {started}"
    assert {int(tag[1:]) for tag in tags} <= started, f"a side effect of a step that never started: {tags}"
    assert len(tags) == len(set(tags)), f"a side effect applied twice before the resume: {tags}"
    ended = {e.payload.step_id for e in events if e.type == "step_finished"} | {
        e.payload.step_id for e in events if e.type == "step_failed" and e.payload.error_kind == "cancelled"}
    assert started <= ended, f"a step that started was left neither finished nor cancelled: {started - ended}"
    steps = state["steps"]
    assert all(steps[str(sid)]["status"] in ("completed", "cancelled") for sid in started), steps


def _expected_started(case: Case, started: set[int]) -> set[int]:
    """The steps that must have started by a cancel at ``case.point`` (exact where the point fixes them; after
    a step finished, its dependents may have started in the moment before the cancel arrived)."""
    kind, _, step = case.point.partition(" ")
    n, deps = STEPS[case.shape], DEPS[case.shape]
    if kind in ("route", "before"):
        return set()
    if kind == "review":
        return set(range(1, n + 1))
    upto = int(step)
    must = {upto} | _ancestors(upto, deps)
    may = must | ({s for s, d in deps.items() if upto in d} if kind == "after" else set())
    if case.shape == "fanout":  # parallel branches: any step whose dependencies were met may have started
        may |= {s for s in range(1, n + 1) if set(deps.get(s, [])) <= must}
    return started if must <= started <= may else must


def _ancestors(step: int, deps: dict[int, list[int]]) -> set[int]:
    found: set[int] = set()
    todo = list(deps.get(step, []))
    while todo:
        dep = todo.pop()
        if dep not in found:
            found.add(dep)
            todo.extend(deps.get(dep, []))
    return found


def _completed(store: str, task_id: str) -> set[int]:
    with Store(store) as s:
        state = s.load_checkpoint(task_id) or {}
    return {int(sid) for sid, rec in state.get("steps", {}).items() if rec["status"] == "completed"}


def _cancelled_steps(store: str, task_id: str) -> set[int]:
    with Store(store) as s:
        return {e.payload.step_id for e in s.events(task_id)
                if e.type == "step_failed" and e.payload.error_kind == "cancelled"}
