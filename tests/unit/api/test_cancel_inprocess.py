"""Cancel (issue 62, item 3) in process: ``handle.cancel()`` / ``orch.cancel(task_id)`` stop a running task at
once (its async tool's coroutine is cancelled, a thread tool is abandoned, a streaming model call stops), keep
every completed step, start nothing after the cancel, end "cancelled" saying who cancelled, and
``orch.resume`` continues without running a completed step again. Cancelling twice, or a finished task, is a
no-op that says so; a task another Orchestrator runs on the same store is cancelled through the store."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from agents import Orchestrator, RuntimeConfig, tool
from agents.errors import UnknownTaskError, UsageError
from agents.llm import FunctionLLM, LLMRequest
from agents.store import Store
from agents.trace.model import build_trace

STARTED = threading.Event()
"""A feed tool began its call."""
CANCELLED = threading.Event()
"""The async feed tool saw its coroutine cancelled."""
RELEASE = threading.Event()
"""Lets the thread feed tool return (the test sets it at the end: the thread is abandoned, not killed)."""
FEED_S = [60.0]
LOOKUPS: list[str] = []


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    LOOKUPS.append(city)
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


@tool(permission="read")
async def slow_feed(label: str) -> str:
    """Waits for a slow feed, then echoes the label.

    Args:
        label: Text to return.
    """
    STARTED.set()
    try:
        await asyncio.sleep(FEED_S[0])
    except asyncio.CancelledError:
        CANCELLED.set()
        raise
    return label


@tool(permission="read")
def blocking_feed(label: str) -> str:
    """Blocks its thread until the feed is released, then echoes the label.

    Args:
        label: Text to return.
    """
    STARTED.set()
    RELEASE.wait(60)
    return label


def _plan(feed: str) -> str:
    return json.dumps({"steps": [
        {"step_id": 1, "description": "Paris", "tool_name": "population", "tool_input": {"city": "Paris"},
         "depends_on": []},
        {"step_id": 2, "description": "the feed", "tool_name": feed, "tool_input": {"label": "fed"},
         "depends_on": [1]}]})


def _script(feed: str):
    def reply(request: LLMRequest) -> str:
        if request.role == "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "lookups", "answer": None})
        if request.role == "planner":
            return _plan(feed)
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "",
                           "answer": "2.1 million, fed"})
    return reply


@pytest.fixture(autouse=True)
def _fresh():
    for flag in (STARTED, CANCELLED, RELEASE):
        flag.clear()
    FEED_S[0] = 60.0
    LOOKUPS.clear()
    yield
    RELEASE.set()


def _orch(tmp_path, llm, tools=(population, slow_feed, blocking_feed)):
    return Orchestrator(llm=llm, tools=list(tools), config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        runtime="inprocess")


def _events_in_time(handle, timeout_s: float = 10.0) -> list:
    """Every event of the handle's run, or a failure (not a hang) when they do not end in time."""
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(handle.events()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    assert not reader.is_alive(), f"the events did not end after the cancel: {[e.type for e in got]}"
    return got


def _assert_nothing_written_after(store_path, task_id: str) -> None:
    """The cancel's task_finished is the log's last event, and the cancelled run writes nothing more (its
    lease generation is revoked: a late claim is refused too)."""
    with Store(store_path) as store:
        before = (store.last_seq(task_id), store.checkpoint_version(task_id))
        assert store.events(task_id)[-1].type == "task_finished"
        time.sleep(0.7)  # longer than the lease watch of a runner elsewhere
        assert (store.last_seq(task_id), store.checkpoint_version(task_id)) == before
        assert store.lease_holder(task_id).owner.startswith("revoked: cancelled by")


def test_a_cancel_stops_a_running_tool_at_once_keeps_completed_steps_and_resume_continues(tmp_path):
    orch = _orch(tmp_path, FunctionLLM(_script("slow_feed")))
    try:
        handle = orch.submit("Population of Paris, then the feed")
        assert STARTED.wait(20)
        asked_at, started = time.time(), time.monotonic()
        outcome = handle.cancel()
        took = time.monotonic() - started
        assert outcome.cancelled and outcome.status == "cancelled" and outcome.task_id == handle.task_id
        assert "cancelled by the API" in outcome.message and "resume" in outcome.message
        assert took < 20.0, f"the cancel hung for {took:.2f}s"  # a hang guard; its speed is benchmarked
        assert CANCELLED.wait(2), "the async tool's coroutine was not cancelled"

        result = handle.result(timeout=5)
        assert (result.status, result.stopped_reason) == ("cancelled", "cancelled")
        assert result.cancelled_by == "the API"
        assert "cancelled by the API" in result.error and result.answer is None
        steps = {s.step_id: s for s in result.steps}
        assert (steps[1].status, steps[1].output) == ("completed", 2.1)
        assert steps[2].status == "cancelled"

        events = _events_in_time(handle)
        assert events[-1].type == "task_finished" and events[-1].payload.status == "cancelled"
        assert events[-1].payload.cancelled_by == "the API"
        assert not [e for e in events if e.type == "step_started" and e.ts >= asked_at], "a step started"
        stopped = [e.payload for e in events if e.type == "step_failed"]
        assert [(p.step_id, p.error_kind) for p in stopped] == [(2, "cancelled")]
        trace = build_trace(handle.task_id, events)
        spans = {s.attrs["step_id"]: s.status for s in trace.spans if s.kind == "step"}
        assert spans == {1: "completed", 2: "cancelled"}  # the trace draws the stopped step as cancelled

        _assert_nothing_written_after(tmp_path / "t.db", handle.task_id)
        again = handle.cancel()
        assert not again.cancelled and again.status == "cancelled" and "already cancelled" in again.message

        FEED_S[0] = 0.0
        resumed = orch.resume(handle.task_id)
        assert resumed.run == 2
        final = resumed.result(timeout=20)
        assert final.status == "accepted" and final.cancelled_by is None and final.error is None
        assert LOOKUPS == ["Paris"], "a completed step ran again after the resume"
        assert [s.status for s in final.steps] == ["completed", "completed"]
    finally:
        orch.shutdown()


def test_a_thread_tool_is_abandoned_without_waiting_for_it(tmp_path):
    orch = _orch(tmp_path, FunctionLLM(_script("blocking_feed")))
    try:
        handle = orch.submit("Population of Paris, then the blocking feed")
        assert STARTED.wait(20)
        started = time.monotonic()
        assert orch.cancel(handle.task_id).cancelled
        assert time.monotonic() - started < 20.0  # a hang guard: the thread itself blocks for ever
        result = handle.result(timeout=5)
        assert result.status == "cancelled" and not RELEASE.is_set()  # the thread still blocks: abandoned
        assert [s.status for s in result.steps] == ["completed", "cancelled"]
    finally:
        RELEASE.set()
        orch.shutdown()


def test_a_streaming_model_call_stops_and_nothing_starts_after_the_cancel(tmp_path):
    """The planner streams its plan slowly; step 1 runs as soon as it is streamed. The cancel stops the stream
    (the model's chunks stop coming), and the plan's later steps never start."""
    chunks_after: list[float] = []
    cancel_at: list[float] = []

    async def counting_sleep(seconds: float) -> None:
        if cancel_at:
            chunks_after.append(seconds)
        await asyncio.sleep(seconds)

    plan = json.dumps({"steps": [
        {"step_id": 1, "description": "Paris", "tool_name": "population", "tool_input": {"city": "Paris"},
         "depends_on": []},
        {"step_id": 2, "description": "Rome", "tool_name": "population", "tool_input": {"city": "Rome"},
         "depends_on": []}]})
    script = _script("slow_feed")
    llm = FunctionLLM(lambda r: plan if r.role == "planner" else script(r), stream_chunk_size=8,
                      chunk_delay_s=0.05, sleep=counting_sleep)
    orch = _orch(tmp_path, llm)
    try:
        handle = orch.submit("Population of Paris and Rome")
        for event in handle.events():
            if event.type == "step_finished":
                break
        cancel_at.append(time.time())
        assert handle.cancel().cancelled
        time.sleep(0.3)
        assert len(chunks_after) <= 1, f"the plan kept streaming after the cancel: {len(chunks_after)} chunks"
        result = handle.result(timeout=5)
        assert result.status == "cancelled"
        assert [s.step_id for s in result.steps if s.status == "completed"] == [1]
        events = _events_in_time(handle)
        assert not [e for e in events if e.type == "step_started" and e.ts >= cancel_at[0]]
        assert LOOKUPS == ["Paris"]

        final = orch.resume(handle.task_id).result(timeout=30)  # the plan is asked for again; step 1 is kept
        assert final.status == "accepted" and LOOKUPS == ["Paris", "Rome"]
    finally:
        orch.shutdown()


def test_cancel_is_a_no_op_that_says_so_for_a_finished_or_unknown_task(tmp_path):
    FEED_S[0] = 0.0
    orch = _orch(tmp_path, FunctionLLM(_script("slow_feed")))
    try:
        handle = orch.submit("Population of Paris, then the feed")
        assert handle.result(timeout=20).status == "accepted"
        outcome = orch.cancel(handle.task_id)
        assert not outcome.cancelled and outcome.status == "accepted"
        assert "already finished" in outcome.message
        assert handle.result(timeout=1).status == "accepted"  # nothing changed
        with pytest.raises(UnknownTaskError, match="no task 'nope'"):
            orch.cancel("nope")
        with pytest.raises(UsageError, match="by="):
            orch.cancel(handle.task_id, by=3)  # type: ignore[arg-type]
        assert asyncio.run(handle.acancel()).status == "accepted"
    finally:
        orch.shutdown()


def test_a_task_another_orchestrator_runs_is_cancelled_through_the_store(tmp_path):
    """The second Orchestrator does not run the task: it takes the task over in the store (fencing out the
    first, whose writes are refused from then on) and ends it; the first notices within its lease watch and
    stops its tool."""
    first = _orch(tmp_path, FunctionLLM(_script("slow_feed")))
    second = _orch(tmp_path, FunctionLLM(_script("slow_feed")))
    try:
        handle = first.submit("Population of Paris, then the feed")
        assert STARTED.wait(20)
        asked_at = time.time()
        outcome = second.cancel(handle.task_id, by="the other driver")
        assert outcome.cancelled and outcome.status == "cancelled"
        result = handle.result(timeout=5)
        assert result.status == "cancelled" and result.cancelled_by == "the other driver"
        assert [s.status for s in result.steps] == ["completed", "cancelled"]
        assert CANCELLED.wait(3), "the first Orchestrator's tool kept running after the cancel"
        _assert_nothing_written_after(tmp_path / "t.db", handle.task_id)
        events = _events_in_time(handle)
        assert events[-1].type == "task_finished" and events[-1].payload.status == "cancelled"
        assert not [e for e in events if e.type == "step_started" and e.ts >= asked_at]
        assert not second.cancel(handle.task_id).cancelled
    finally:
        first.shutdown()
        second.shutdown()
