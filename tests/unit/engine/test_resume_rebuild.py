"""Append-only checkpoints: a task stopped at any commit and resumed from the store ends as the uninterrupted
run does, and no step the store recorded as completed runs again (issue 19, part 2; no Ray)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import wire
from support.local import local_runtime

from agents.config import RuntimeConfig
from agents.engine.supervisor import SupervisorCore
from agents.llm import FunctionLLM
from agents.store import Store, TaskBatch
from agents.store.batch import apply_delta
from agents.store.journal import StoreJournal
from agents.tools import tool
from support.tiers import examples

RUNS: Counter[str] = Counter()
"""How many times each step's side effect ran (the tools run in this process)."""


@tool(permission="write")
async def append_tag(tag: str) -> str:
    """Append a tag to the log, then work a moment.

    Args:
        tag: The tag.
    """
    RUNS[tag] += 1
    await asyncio.sleep(0.001)
    return tag


class _Crash(Exception):
    """The process died: this commit and every later one never reach the file."""


class CrashingStore(Store):
    def __init__(self, *args: Any, commits_before_crash: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commits_left = commits_before_crash

    def write_batches(self, batches):  # type: ignore[no-untyped-def]
        """Every write (one batch, or a group commit's) counts one commit per batch; the crash comes before the
        first batch over the budget, so a group is cut where the process would have died."""
        errors = []
        for batch in batches:
            if self.commits_left <= 0:
                raise _Crash()
            self.commits_left -= 1
            errors += super().write_batches([batch])
        return errors


def _plan(deps: list[list[int]]) -> str:
    return wire.plan(*[wire.step(i + 1, "append_tag", {"tag": f"t{i + 1}"}, deps=d) for i, d in enumerate(deps)])


def _runtime(store: Store, plan: str, review_s: float = 0.0):
    async def reply(request):  # type: ignore[no-untyped-def]
        if request.role == "reflector" and review_s:
            await asyncio.sleep(review_s)  # a review that takes a moment: the last step's write commits alone
        replies = {"router": wire.route(), "planner": plan, "reflector": wire.reflection(answer="ok")}
        return replies[request.role]

    llm = FunctionLLM(reply)
    rt = local_runtime(llm, [append_tag], RuntimeConfig())
    journal = StoreJournal(store, grace_s=0.0)  # the crashed runner is gone: take its claims over at once
    for executor in rt._executors:
        executor._dispatcher._journal = journal
    return rt


async def _run(store: Store, plan: str, *, resume: str | None = None,
               review_s: float = 0.0) -> tuple[str, Any]:
    core = SupervisorCore(store, _runtime(store, plan, review_s), RuntimeConfig())
    task_id = resume or await core.submit("tags")
    if resume:
        await core.resume(task_id)
    for _ in range(200):
        result = await core.wait_result(task_id, timeout_s=0.05)
        if result is not None or not core._is_running(task_id):
            break
    await asyncio.sleep(0)  # let the cancelled runner finish its cleanup
    return task_id, result


@st.composite
def dags(draw) -> list[list[int]]:
    n = draw(st.integers(1, 6))
    return [sorted(draw(st.sets(st.integers(1, i), max_size=2))) if i > 0 else [] for i in range(n)]


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(deps=dags(), crash_at=st.integers(1, 30))
def test_a_task_stopped_at_any_commit_resumes_to_the_uninterrupted_result(tmp_path_factory, deps, crash_at):
    plan = _plan(deps)
    RUNS.clear()
    reference_path = tmp_path_factory.mktemp("ref") / "r.db"
    with Store(reference_path) as ref:
        _, expected = asyncio.run(_run(ref, plan))
    RUNS.clear()
    path = tmp_path_factory.mktemp("crash") / "c.db"
    with CrashingStore(path, commits_before_crash=crash_at) as crashing:
        task_id, first = asyncio.run(_run(crashing, plan))
    with Store(path) as after_crash:
        state = after_crash.load_checkpoint(task_id) or {}
        done_at_crash = {s for s, rec in state.get("steps", {}).items() if rec["status"] == "completed"}
        _, resumed = asyncio.run(_run(after_crash, plan, resume=task_id)) if first is None else (task_id, first)
    assert resumed is not None and resumed["status"] == expected["status"] == "accepted"
    assert [(s["step_id"], s["status"], s["output"]) for s in resumed["steps"]] == \
        [(s["step_id"], s["status"], s["output"]) for s in expected["steps"]]
    for step_id in done_at_crash:
        assert RUNS[f"t{step_id}"] == 1, f"step {step_id} was completed in the store and ran again"
    assert all(n <= 2 for n in RUNS.values()), RUNS


_STEP = st.fixed_dictionaries({"status": st.sampled_from(["pending", "running", "completed", "failed"]),
                               "attempts": st.integers(0, 3)})
_OPS = st.lists(st.one_of(
    st.tuples(st.just("full"), st.integers(0, 5)),
    st.tuples(st.just("delta"), st.dictionaries(st.integers(1, 8).map(str), _STEP, max_size=3),
              st.integers(0, 2), st.sampled_from(["execute", "reflect"]))), min_size=1, max_size=25)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_the_stored_checkpoint_is_the_full_copy_plus_every_later_delta(tmp_path_factory, ops):
    """Whatever mix of full checkpoints and deltas was written, the store reads back the state a reader that
    applied every write in order holds (deltas before a full checkpoint are dropped, later ones kept)."""
    with Store(tmp_path_factory.mktemp("d") / "d.db") as store:
        store.create_task("t", "task", {})
        model: dict[str, Any] = {"phase": "route", "steps": {}, "plan_steps": []}
        store.write_batch(TaskBatch("t", None, checkpoint=(0, dict(model))))
        for seq, op in enumerate(ops, start=1):
            if op[0] == "full":
                model = {"phase": "plan", "steps": {str(i): {"status": "pending", "attempts": 0}
                                                    for i in range(1, op[1] + 1)},
                         "plan_steps": [{"step_id": i} for i in range(1, op[1] + 1)]}
                store.write_batch(TaskBatch("t", None, checkpoint=(seq, json.loads(json.dumps(model)))))
            else:
                _, steps, grow, phase = op
                start = len(model["plan_steps"])
                delta = {"fields": {"phase": phase}, "steps": steps, "plan_from": start,
                         "plan_steps": [{"step_id": start + i + 1} for i in range(grow)]}
                apply_delta(model, json.loads(json.dumps(delta)))
                store.write_batch(TaskBatch("t", None, delta=(seq, delta)))
            assert store.load_checkpoint("t") == model


def test_steps_a_dying_runner_recorded_as_lost_executors_run_again_on_resume(tmp_path):
    """A killed driver's Supervisor outlives its executors for a moment and records their loss as step failures
    ("died 3 times"), then the task's phase as reflect; the resume used to judge those failures instead of
    running the steps (seen in the crash matrix on CI). An executor's loss says nothing about its step."""
    plan = _plan([[], [1], [2]])
    for crash_at in range(1, 60):  # the first commit that leaves every step completed and the task unfinished
        path = tmp_path / f"c{crash_at}.db"
        RUNS.clear()
        with CrashingStore(path, commits_before_crash=crash_at) as crashing:
            task_id, first = asyncio.run(_run(crashing, plan, review_s=0.01))
        with Store(path) as store:
            state = store.load_checkpoint(task_id) or {}
        steps = state.get("steps", {})
        if first is None and len(steps) == 3 and all(rec["status"] == "completed" for rec in steps.values()):
            break
    else:
        raise AssertionError("no commit left every step completed and the task unfinished")
    # The review's verdict and the result commit together (the run ends in the tick its review does): the
    # dying runner's last write before it is the steps', and the phase the runner had moved on to is reflect.
    state["phase"] = "reflect"
    # What the dying runner wrote: step 2's executors "died", step 3 skipped for it (its output is not stored).
    state["steps"]["2"].update(status="failed", error_kind="executor_died",
                               error="the executor running step 2 died 3 times: the executor process died")
    state["steps"]["3"].update(status="skipped", error="skipped: step 2 did not complete")
    with Store(path) as store:
        store.write_batch(TaskBatch(task_id, None, checkpoint=(10_000, state)))
        RUNS.clear()
        _, resumed = asyncio.run(_run(store, plan, resume=task_id))
    assert resumed is not None and resumed["status"] == "accepted"
    assert [s["status"] for s in resumed["steps"]] == ["completed"] * 3
    # Every write had applied before the "loss" and its journal entry says so: run again, none writes twice.
    assert not RUNS, RUNS
