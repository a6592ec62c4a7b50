"""Group commit: the batches of every task written in one event-loop tick go to the store in one call (one
transaction); a runner that lost its task is stopped alone; a sink that flushes itself first is not written
twice, and live readers see each event once it is durable."""

from __future__ import annotations

import asyncio

from agents.engine.sink import SinkHooks, StoreSink
from agents.events import TaskSubmittedPayload, parse_event
from agents.store import LeaseLostError, Store


class CountingStore(Store):
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.calls: list[list[str]] = []

    def write_batches(self, batches):  # type: ignore[no-untyped-def]
        self.calls.append([b.task_id for b in batches])
        return super().write_batches(batches)


def _hooks(seen: list, lost: list) -> SinkHooks:
    """Hooks that keep the durable events (parsed back from their rows) and the errors of lost tasks."""
    return SinkHooks(lambda task_id, rows: seen.extend(parse_event(row[4]) for row in rows),
                     lambda task_id, error: lost.append(error), lambda task_id: None)


def _sinks(store: Store, ids: list[str], seen: list, lost: list) -> list[StoreSink]:
    sinks = []
    for task_id in ids:
        store.create_task(task_id, "t", {})
        generation = store.acquire_lease(task_id, "me")
        sinks.append(StoreSink(store, task_id, _hooks(seen, lost), generation=generation))
    return sinks


def test_one_tick_of_many_tasks_is_one_store_call(tmp_path):
    seen: list = []
    lost: list = []
    with CountingStore(tmp_path / "g.db") as store:
        async def run() -> None:
            sinks = _sinks(store, ["a", "b", "c"], seen, lost)
            for sink in sinks:
                sink.emit(TaskSubmittedPayload(task="t"))
                sink.emit(TaskSubmittedPayload(task="t again"))
            assert seen == []  # nothing is published before it is durable
            await asyncio.sleep(0)
            await asyncio.sleep(0)

        asyncio.run(run())
        assert store.calls == [["a", "b", "c"]]
        assert [(e.task_id, e.seq) for e in seen] == [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("c", 1), ("c", 2)]
        assert [store.last_seq(t) for t in "abc"] == [2, 2, 2] and lost == []


def test_a_runner_that_lost_its_task_is_stopped_alone(tmp_path):
    seen: list = []
    lost: list = []
    with CountingStore(tmp_path / "g.db") as store:
        async def run() -> None:
            a, b = _sinks(store, ["a", "b"], seen, lost)
            store.acquire_lease("a", "someone else")  # a's runner is fenced out
            a.emit(TaskSubmittedPayload(task="t"))
            b.emit(TaskSubmittedPayload(task="t"))
            await asyncio.sleep(0)
            assert isinstance(a.lost, LeaseLostError) and b.lost is None

        asyncio.run(run())
        assert [type(e) for e in lost] == [LeaseLostError]
        assert [e.task_id for e in seen] == ["b"] and store.last_seq("a") == 0 and store.last_seq("b") == 1


def test_a_sink_that_flushes_first_is_not_written_again(tmp_path):
    seen: list = []
    with CountingStore(tmp_path / "g.db") as store:
        async def run() -> None:
            (a,) = _sinks(store, ["a"], seen, [])
            a.emit(TaskSubmittedPayload(task="t"))
            a.flush()  # before a read
            await asyncio.sleep(0)

        asyncio.run(run())
        assert store.calls == [["a"]] and [e.seq for e in seen] == [1] and store.last_seq("a") == 1


def test_hooks_hear_durable_events_as_their_stored_rows_and_a_lost_task_by_its_id(tmp_path):
    rows: list = []
    lost: list = []
    hooks = SinkHooks(lambda task_id, written: rows.extend((task_id, r[1], r[2]) for r in written),
                      lambda task_id, error: lost.append((task_id, type(error))), lambda task_id: None)
    with CountingStore(tmp_path / "g.db") as store:
        async def run() -> None:
            sinks = []
            for task_id in ("a", "b"):
                store.create_task(task_id, "t", {})
                sinks.append(StoreSink(store, task_id, hooks, generation=store.acquire_lease(task_id, "me"),
                                       last_seq=0))
            store.acquire_lease("b", "someone else")  # b's runner is fenced out
            for sink in sinks:
                sink.emit(TaskSubmittedPayload(task="t"))
            sinks[0].emit(TaskSubmittedPayload(task="t again"))
            assert rows == []  # nothing is published before it is durable
            await asyncio.sleep(0)

        asyncio.run(run())
        assert rows == [("a", 1, "task_submitted"), ("a", 2, "task_submitted")]
        assert lost == [("b", LeaseLostError)]
        assert [e.seq for e in store.events("a")] == [1, 2] and store.events("b") == []


def test_a_sink_holds_no_batch_between_ticks_and_a_flush_with_nothing_waiting_writes_nothing(tmp_path):
    seen: list = []
    lost: list = []
    with CountingStore(tmp_path / "g.db") as store:
        async def run() -> StoreSink:
            (sink,) = _sinks(store, ["a"], seen, lost)
            assert sink.take() is None  # nothing emitted yet
            sink.emit(TaskSubmittedPayload(task="t"))
            await asyncio.sleep(0)
            sink.flush()
            return sink

        sink = asyncio.run(run())
        assert sink._batch is None and store.calls == [["a"]] and [e.seq for e in seen] == [1]
