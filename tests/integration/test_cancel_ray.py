"""Cancel on Ray (issue 62, item 3): a task whose executor actor runs a tool sleeping 60 s while the planner
actor still streams the plan is cancelled from the driver (``handle.cancel()``) and from another process
through the store (``tetrarch cancel``). Either way: status "cancelled" (the 1 s target is measured by
``python -m benchmarks.system.run --only cancel``, benchmarks/results/cancel.md; here only a hang is
caught, the machine is shared), the tool's coroutine in the executor actor is cancelled, the planner's stream
stops, no step starts after the cancel, the completed step keeps its record, and a resume continues without
running it again. The measured latencies are printed and recorded as test properties."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import tools as T

from agents import Orchestrator, RuntimeConfig, tool
from agents.llm import FunctionLLM, LLMRequest

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 20.0
"""A hang guard, not the target (1 s, benchmarked): a shared two-core machine stalls for seconds at times."""


@tool(permission="read")
async def watched_feed(seconds: float, label: str) -> str:
    """Waits for a slow feed, then echoes the label; notes in files when it starts and when it is cancelled.

    Args:
        seconds: How long the feed takes.
        label: Text to return.
    """
    T.bump(f"feed-started-{label}")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        # The time first, then the count that says it is there.
        (T.COUNTER_DIR / f"feed-cancelled-at-{label}").write_text(repr(time.time()))
        T.bump(f"feed-cancelled-{label}")
        raise
    T.bump(f"feed-finished-{label}")
    return label


def _plan(label: str, seconds: float, padding: int) -> str:
    """Step 1 looks Paris up, step 2 waits for the feed; step 3's long description keeps the planner
    streaming."""
    return json.dumps({"steps": [
        {"step_id": 1, "description": "Paris", "tool_name": "lookup", "tool_input": {"city": "Paris"},
         "depends_on": []},
        {"step_id": 2, "description": "the feed", "tool_name": "watched_feed",
         "tool_input": {"seconds": seconds, "label": label}, "depends_on": [1]},
        {"step_id": 3, "description": "Rome " + "and more " * padding, "tool_name": "lookup",
         "tool_input": {"city": "Rome"}, "depends_on": [2]}]})


def script(request: LLMRequest) -> str:
    label = "ray-direct" if "ray-direct" in json.dumps(request.messages) else "ray-store"
    if request.role == "router":
        return json.dumps({"route": "plan", "confidence": 0.9, "reason": "lookups", "answer": None})
    if request.role == "planner":
        first = T.bump(f"plans-{label}") == 1
        # The first plan streams for ~15 s (the cancel comes while it does); a resume's plan is quick.
        return _plan(label, 60.0, 200) if first else _plan(label, 0.0, 0)
    return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                       "action": "accept", "retry_details": None, "feedback": "", "answer": "done"})


async def counting_sleep(seconds: float) -> None:
    """The planner's stream between two chunks (in the planner actor): counted, to see the stream stop."""
    T.bump("plan-chunks")
    await asyncio.sleep(seconds)


def _orch(store: Path) -> Orchestrator:
    llm = FunctionLLM(script, stream_chunk_size=16, chunk_delay_s=0.1, sleep=counting_sleep)
    return Orchestrator(llm=llm, tools=[T.lookup, watched_feed], config=RuntimeConfig(store_path=store),
                        runtime="ray")


def _wait_started(label: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while T.count(f"feed-started-{label}") < 1:
        assert time.monotonic() < deadline, "the feed step never started"
        time.sleep(0.05)


def _wait_count(name: str, n: int, timeout_s: float) -> float:
    started = time.monotonic()
    while T.count(name) < n:
        assert time.monotonic() - started < timeout_s, f"{name} did not reach {n} within {timeout_s}s"
        time.sleep(0.02)
    return time.monotonic() - started


def _reset(label: str) -> None:
    for name in (f"feed-started-{label}", f"feed-cancelled-{label}", f"feed-finished-{label}",
                 f"feed-cancelled-at-{label}", f"plans-{label}", "plan-chunks", "lookup-paris",
                 "lookup-rome"):
        T.reset(name)


def _check_cancelled(result, events, asked_at: float, by: str) -> None:
    assert (result.status, result.stopped_reason, result.cancelled_by) == ("cancelled", "cancelled", by)
    assert [(s.step_id, s.status) for s in result.steps][:2] == [(1, "completed"), (2, "cancelled")]
    assert events[-1].type == "task_finished" and events[-1].payload.status == "cancelled"
    assert not [e for e in events if e.type == "step_started" and e.ts >= asked_at], "a step started after"


def test_cancel_from_the_driver_stops_the_tool_and_the_stream_within_the_bound(ray_session, tmp_path,
                                                                              record_property):
    _reset("ray-direct")
    orch = _orch(tmp_path / "t.db")
    try:
        handle = orch.submit("ray-direct: Paris, the feed, then Rome")
        _wait_started("ray-direct")
        asked_at, started = time.time(), time.monotonic()
        outcome = handle.cancel()
        result = handle.result(timeout=30)
        latency = time.monotonic() - started
        chunks = T.count("plan-chunks")
        tool_stopped = _wait_count("feed-cancelled-ray-direct", 1, BOUND_S)
        record_property("cancel_to_cancelled_s", round(latency, 3))
        print(f"\nRay, handle.cancel() -> status cancelled: {latency:.3f}s; tool cancelled in the executor "
              f"{tool_stopped:.3f}s after that")
        assert outcome.cancelled and latency < BOUND_S
        _check_cancelled(result, list(handle.events()), asked_at, "the API")
        time.sleep(1.0)
        assert T.count("plan-chunks") - chunks <= 1, "the planner actor kept streaming after the cancel"
        assert T.count("feed-finished-ray-direct") == 0

        final = orch.resume(handle.task_id).result(timeout=120)
        assert final.status == "accepted", final.error
        assert T.count("lookup-paris") == 1, "the completed step ran again after the resume"
    finally:
        orch.shutdown()


def test_cancel_from_another_process_through_the_store(ray_session, tmp_path, record_property):
    _reset("ray-store")
    store = tmp_path / "t.db"
    orch = _orch(store)
    try:
        handle = orch.submit("ray-store: Paris, the feed, then Rome")
        _wait_started("ray-store")
        asked_at, started = time.time(), time.monotonic()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
        command = [sys.executable, "-m", "agents.cli", "cancel", handle.task_id, "--store", str(store)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        command_s = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        assert f"task {handle.task_id} cancelled by tetrarch cancel" in done.stdout
        result = handle.result(timeout=30)
        _wait_count("feed-cancelled-ray-store", 1, BOUND_S)
        stopped_at = float((T.COUNTER_DIR / "feed-cancelled-at-ray-store").read_text())
        watch_s = stopped_at - result.timings.finished_at  # the cancel stored → the actor's tool cancelled
        record_property("store_cancel_to_tool_cancelled_s", round(watch_s, 3))
        print(f"\nRay, `tetrarch cancel` from another process: the command took {command_s:.2f}s "
              f"(interpreter start included); stored cancel -> tool cancelled in the executor actor: "
              f"{watch_s:.3f}s")
        assert watch_s < BOUND_S
        _check_cancelled(result, list(handle.events()), asked_at, "tetrarch cancel")
        assert T.count("feed-finished-ray-store") == 0
    finally:
        orch.shutdown()
