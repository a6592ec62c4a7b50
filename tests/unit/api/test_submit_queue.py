"""``Orchestrator.submit`` queues its task and returns (``agents.submits``): a burst goes to the Supervisor in one
call, in order, and every call about a task waits for its submit first; a refused submit raises from the handle."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from agents import Orchestrator, RuntimeConfig
from agents.errors import OrchestratorClosedError
from agents.llm import FunctionLLM
from agents.store import StoreError
from agents.submits import SubmitQueue
from tests.unit.api.test_inprocess_runtime import population, script


class _Slow:
    """A Supervisor whose first answer takes a while: what queues up meanwhile goes in the next burst."""

    def __init__(self, refuse: str | None = None) -> None:
        self.bursts: list[list[str]] = []
        self.first = threading.Event()
        self.sent = threading.Event()
        self.refuse = refuse

    def send(self, key, items):
        self.bursts.append([task_id for _, task_id, _ in items])
        self.sent.set()
        if len(self.bursts) == 1:
            self.first.wait(5)
        return [StoreError("disk full") if task_id == self.refuse else None for _, task_id, _ in items]


def test_submits_made_while_one_is_in_flight_go_together_in_order():
    sup = _Slow()
    queue = SubmitQueue(sup.send, group=lambda task_id: 0)
    done = [queue.put("task 0", "t0", None)]
    assert sup.sent.wait(5)  # alone, it went at once
    done += [queue.put(f"task {i}", f"t{i}", None) for i in range(1, 20)]
    sup.first.set()
    for i, d in enumerate(done):
        queue.wait_for(f"t{i}", d)
    queue.close()
    assert [t for burst in sup.bursts for t in burst] == [f"t{i}" for i in range(20)]
    assert len(sup.bursts) == 2, sup.bursts


def test_a_refused_submit_raises_its_own_error_where_its_task_is_used_and_the_others_start():
    sup = _Slow(refuse="t1")
    sup.first.set()
    queue = SubmitQueue(sup.send, group=lambda task_id: 0)
    done = [queue.put("x", f"t{i}", None) for i in range(3)]
    queue.wait_for("t0", done[0])
    with pytest.raises(StoreError, match="disk full"):
        queue.wait_for("t1", done[1])
    queue.wait_for("t2", done[2])
    queue.close()


def test_the_submits_of_one_burst_are_answered_together_and_each_keeps_its_own_error():
    sup = _Slow(refuse="t2")
    queue = SubmitQueue(sup.send, group=lambda task_id: int(task_id[1:]) % 2)  # two shards: one burst each
    first = queue.put("x", "t0", None)
    assert sup.sent.wait(5)
    later = [queue.put("x", f"t{i}", None) for i in range(1, 5)]
    assert not any(d.done() for d in later)  # queued behind the first answer
    sup.first.set()
    queue.wait_for("t0", first)
    assert queue.wait_for("t1", later[0]) and queue.wait_for("t4", later[3])
    assert later[0].burst is later[2].burst and later[1].burst is later[3].burst  # by shard, in put order
    assert later[0].burst is not later[1].burst and [d.index for d in later] == [0, 0, 1, 1]
    with pytest.raises(StoreError, match="disk full"):
        asyncio.run(queue.await_for("t2", later[1]))
    asyncio.run(queue.await_for("t3", later[2]))
    assert later[1].error() is not None and later[3].error() is None
    queue.close()
    assert sup.bursts[1:] == [["t1", "t3"], ["t2", "t4"]]


def test_close_sends_what_is_queued_and_refuses_later_submits():
    sup = _Slow()
    queue = SubmitQueue(sup.send, group=lambda task_id: task_id[-1])  # two shards: two calls a burst
    queue.put("a", "t0", None)
    queue.put("b", "t1", None)
    sup.first.set()
    queue.close()
    assert sorted(t for burst in sup.bursts for t in burst) == ["t0", "t1"]
    with pytest.raises(OrchestratorClosedError):
        queue.put("c", "t2", None)


def _orch(tmp_path):
    return Orchestrator(llm=FunctionLLM(script), tools=[population], runtime="inprocess",
                        config=RuntimeConfig(store_path=tmp_path / "t.db"))


def test_one_thread_submitting_fast_makes_one_supervisor_call_per_burst_not_per_task(tmp_path):
    with _orch(tmp_path) as orch:
        calls: list[str] = []
        real = orch._backend.call

        def counted(method, *args, **kw):
            calls.append(method)
            if method == "submit_many" and calls.count("submit_many") == 1:
                time.sleep(0.3)  # the Supervisor is busy: the submits below queue up meanwhile
            return real(method, *args, **kw)

        orch._backend.call = counted
        handles = [orch.submit(f"Which is bigger, Paris or Rome? ({i})") for i in range(30)]
        results = [h.result(timeout=30) for h in handles]
    assert all(r.status == "accepted" for r in results)
    assert calls.count("submit") == 0 and calls.count("submit_many") <= 3, calls.count("submit_many")


def test_a_task_can_be_cancelled_right_after_its_submit_returned(tmp_path):
    with _orch(tmp_path) as orch:
        handle = orch.submit("Which is bigger, Paris or Rome?")
        outcome = orch.cancel(handle.task_id)  # reaches the Supervisor only after the task exists
        assert handle.result(timeout=30).task_id == handle.task_id
    assert outcome.task_id == handle.task_id


def test_a_submit_the_store_refuses_raises_from_its_handle(tmp_path, monkeypatch):
    with _orch(tmp_path) as orch:
        store = orch._backend._core._store

        def full(*args, **kw):
            raise StoreError("the disk is full")

        monkeypatch.setattr(store, "create_tasks", full)
        handle = orch.submit("Which is bigger, Paris or Rome?")  # returns at once: nothing waited
        with pytest.raises(StoreError, match="the disk is full"):
            handle.result(timeout=10)
        with pytest.raises(StoreError, match="the disk is full"):
            list(handle.events())


def test_shutdown_right_after_submit_keeps_the_task(tmp_path):
    with _orch(tmp_path) as orch:
        task_id = orch.submit("Which is bigger, Paris or Rome?").task_id
    with _orch(tmp_path) as again:
        assert again.resume(task_id).result(timeout=30).status == "accepted"


def test_a_tool_that_submits_and_waits_from_the_runtime_s_own_thread_is_refused_not_hung(tmp_path):
    from agents import tool

    seen: list[str] = []
    holder: list[Orchestrator] = []

    @tool(permission="read")
    async def population(city: str) -> float:
        """Population of a city in millions.

        Args:
            city: English city name.
        """
        if not seen:  # an async tool runs on the runtime's own loop: a blocking wait there would wait for itself
            try:
                holder[0].submit("inner task").result(timeout=5)
            except RuntimeError as exc:
                seen.append(str(exc))
        return 2.1

    with Orchestrator(llm=FunctionLLM(script), tools=[population], runtime="inprocess",
                      config=RuntimeConfig(store_path=tmp_path / "t.db")) as orch:
        holder.append(orch)
        started = time.monotonic()
        orch.run("Which is bigger, Paris or Rome?", timeout=30)
    assert seen and "async API" in seen[0] and time.monotonic() - started < 20


def test_reading_many_results_one_after_another_asks_the_supervisor_far_fewer_times(tmp_path):
    with _orch(tmp_path) as orch:
        handles = [orch.submit(f"Which is bigger, Paris or Rome? ({i})") for i in range(30)]
        handles[-1].result(timeout=30)
        time.sleep(0.5)  # every task has finished by now (one-step plans, an instant tool)
        calls: list[str] = []
        real = orch._backend.call
        orch._backend.call = lambda method, *args, **kw: (calls.append(method), real(method, *args, **kw))[1]
        results = [h.result(timeout=30) for h in handles[:-1]]
    assert [r.task_id for r in results] == [h.task_id for h in handles[:-1]]
    assert all(r.status == "accepted" for r in results)
    assert len(calls) <= 2, calls  # one call brought the other finished results along


def test_a_result_that_can_continue_is_not_kept_for_a_later_reader():
    from agents.result_reads import ResultReads

    answers = {"a": {"status": "accepted"}, "b": {"status": "escalated"}}
    asked: list[str] = []

    def call(task_id, run, wait_s, others):
        asked.append(task_id)
        return answers[task_id], {t: answers[t] for t in others}

    reads = ResultReads(call)
    reads.submitted("a")
    reads.submitted("b")
    assert reads.wait("a", 1, 1.0) == {"status": "accepted"}
    assert reads.wait("b", 1, 1.0) == {"status": "escalated"}  # asked again: respond() may continue it
    assert asked == ["a", "b"]
    reads.submitted("c")
    answers["c"] = {"status": "failed"}
    reads.wait("a", 2, 1.0)  # a later run is asked for, never taken from what was kept
    assert reads.wait("c", 1, 1.0) == {"status": "failed"} and asked == ["a", "b", "a"]


def test_waiting_for_a_submit_still_on_its_way_keeps_to_the_callers_timeout():
    """``handle.result(timeout=...)`` must not wait past its timeout behind a Supervisor slow to take the submit."""
    sup = _Slow()
    queue = SubmitQueue(sup.send, group=lambda task_id: 0)
    done = queue.put("task 0", "t0", None)
    assert sup.sent.wait(5)
    started = time.monotonic()
    assert queue.wait_for("t0", done, timeout=0.05) is False
    assert time.monotonic() - started < 4  # well before the slow answer (5 s): a hang guard, not a speed bound
    sup.first.set()
    assert queue.wait_for("t0", done, timeout=5) is True
    queue.close()
