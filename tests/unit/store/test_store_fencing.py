"""Leases fence every write; the journal claims a side effect atomically before it runs (issue 19, part 1)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from agents.events import StepStartedPayload, make_event
from agents.idempotency import Fence
from agents.store import LeaseLostError, Store, TaskBatch, TaskExistsError
from agents.store.fencing import Claimed, Held, LeaseLost, Recorded
from agents.store.journal import StoreJournal
from agents.tools import ToolDispatcher, ToolRegistry, tool


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "f.db") as s:
        s.create_task("t", "task", {})
        yield s


def _event(seq: int):
    return make_event(StepStartedPayload(step_id=1, attempt=1, tool_name="x", plan_version=1), task_id="t", seq=seq,
                      ts=0.0)


def test_a_stale_generation_cannot_write_and_nothing_of_its_batch_lands(store):
    assert store.acquire_lease("t", "old") == 1
    row, _ = store.event_row("t", _event(1))
    store.write_batch(TaskBatch("t", 1, events=[row], checkpoint=(1, {"phase": "execute"})))
    assert store.acquire_lease("t", "new") == 2
    stale_row, _ = store.event_row("t", _event(2))
    with pytest.raises(LeaseLostError, match="generation 2, not 1"):
        store.write_batch(TaskBatch("t", 1, events=[stale_row], checkpoint=(2, {"phase": "done"}),
                                    outputs=[store.output_row("t", 1, 1, 1, "stale")]))
    assert store.last_seq("t") == 1 and store.load_checkpoint("t") == {"phase": "execute"}
    assert store.get_step_outputs("t") == {}
    store.write_batch(TaskBatch("t", 2, events=[stale_row]))  # the current generation writes fine
    assert store.last_seq("t") == 2


def test_a_stale_runner_cannot_store_the_result(store):
    from agents.results import TaskResult, Timings

    store.acquire_lease("t", "old")
    store.acquire_lease("t", "new")
    result = TaskResult(task_id="t", status="accepted", stopped_reason="accepted", timings=Timings(wall_s=1.0))
    with pytest.raises(LeaseLostError):
        store.finish_task("t", result, generation=1)
    assert store.get_result("t") is None
    store.finish_task("t", result, generation=2)
    assert store.get_result("t").status == "accepted"


def test_claim_protocol_one_claimant_runs_and_the_other_reads_the_record(store):
    store.acquire_lease("t", "a")
    first, second = Fence(1, 0, "exec-0:a"), Fence(1, 0, "exec-1:b")
    assert store.journal_claim("t:k", "t", first, grace_s=5.0) == Claimed()
    assert isinstance(store.journal_claim("t:k", "t", second, grace_s=5.0), Held)
    assert store.journal_record("t:k", second, "not mine") is False
    assert store.journal_record("t:k", first, {"wrote": 1}) is True
    assert store.journal_claim("t:k", "t", second, grace_s=5.0) == Recorded('{"wrote":1}')
    assert store.journal_get("t:k").output == {"wrote": 1}


def test_a_newer_generation_takes_over_an_unrecorded_claim_only_after_the_grace(tmp_path):
    now = [100.0]
    with Store(tmp_path / "g.db", clock=lambda: now[0]) as store:
        store.create_task("t", "task", {})
        store.acquire_lease("t", "old")
        old = Fence(1, 0, "old")
        assert store.journal_claim("t:k", "t", old, grace_s=5.0) == Claimed()
        store.acquire_lease("t", "new")
        new = Fence(2, 0, "new")
        now[0] = 103.0
        assert isinstance(store.journal_claim("t:k", "t", new, grace_s=5.0), Held)
        assert store.journal_claim("t:k2", "t", old, grace_s=5.0) == LeaseLost(1, 2)
        now[0] = 106.0
        assert store.journal_claim("t:k", "t", new, grace_s=5.0) == Claimed()
        # The old call finishes late: its record no longer matches the claim and is dropped.
        assert store.journal_record("t:k", old, "late") is False
        assert store.journal_record("t:k", new, "fresh") is True


def test_a_redispatch_by_the_same_runner_takes_the_claim_at_once(store):
    store.acquire_lease("t", "a")
    assert store.journal_claim("t:k", "t", Fence(1, 0, "dead-executor"), grace_s=60.0) == Claimed()
    assert store.journal_claim("t:k", "t", Fence(1, 1, "other-executor"), grace_s=60.0) == Claimed()


def test_claims_race_across_threads_and_exactly_one_wins(tmp_path):
    path = tmp_path / "race.db"
    with Store(path) as setup:
        setup.create_task("t", "task", {})
        setup.acquire_lease("t", "a")
    winners: list[str] = []
    barrier = threading.Barrier(6)

    def contend(i: int) -> None:
        with Store(path) as mine:  # one connection per thread: separate SQLite writers
            barrier.wait()
            if mine.journal_claim("t:race", "t", Fence(1, 0, f"c{i}"), grace_s=5.0) == Claimed():
                winners.append(f"c{i}")

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1


def test_v1_journal_entries_survive_the_migration(tmp_path):
    from agents.store import schema

    path = tmp_path / "v1.db"
    conn = schema.open_connection(str(path), durable=False)
    schema.migrate(conn, path=str(path), migrations=schema.MIGRATIONS[:1])
    conn.execute("INSERT INTO journal(key, task_id, output_json, recorded_at) VALUES ('t:k', 't', '5', 1.0)")
    conn.close()
    with Store(path) as store:
        assert store.schema_version == schema.SCHEMA_VERSION
        assert store.journal_get("t:k").output == 5
        assert store.journal_claim("t:k", "t", Fence(1, 0, "x"), grace_s=1.0) == Recorded("5")
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(path).execute("SELECT state_json FROM journal")


@tool(permission="write", key_param="request_id")
def remote_write(value: int, request_id: str = "") -> str:
    """Write a value to an outside system that deduplicates by request id.

    Args:
        value: What to write.
    """
    return f"{value}@{request_id}"


def test_two_dispatchers_of_one_write_run_it_once_and_both_get_its_output(store):
    store.acquire_lease("t", "a")
    calls: list[int] = []

    @tool(permission="write")
    async def slow_write(value: int) -> int:
        """Write slowly.

        Args:
            value: What to write.
        """
        calls.append(value)
        await asyncio.sleep(0.2)
        return value * 10

    async def both() -> list:
        journal = StoreJournal(store)
        one = ToolDispatcher(ToolRegistry([slow_write]), journal=journal)
        two = ToolDispatcher(ToolRegistry([slow_write]), journal=journal)
        return await asyncio.gather(
            one.call("slow_write", {"value": 4}, idempotency_key="t:w", fence=Fence(1, 0, "one")),
            two.call("slow_write", {"value": 4}, idempotency_key="t:w", fence=Fence(1, 0, "two")))

    results = asyncio.run(both())
    assert calls == [4]
    assert sorted(r.output for r in results) == [40, 40]
    assert sorted(r.from_journal for r in results) == [False, True]


def test_a_tool_with_key_param_receives_the_step_key_and_the_model_never_sees_it(store):
    store.acquire_lease("t", "a")
    assert "request_id" not in remote_write.spec.parameters["properties"]
    dispatcher = ToolDispatcher(ToolRegistry([remote_write]), journal=StoreJournal(store))
    result = asyncio.run(dispatcher.call("remote_write", {"value": 3}, idempotency_key="t:abc",
                                         fence=Fence(1, 0, "x")))
    assert result.output == "3@t:abc"


def test_a_stale_dispatcher_runs_nothing(store):
    from agents.tools.dispatch import LeaseLostToolError

    store.acquire_lease("t", "old")
    store.acquire_lease("t", "new")
    ran: list[int] = []

    @tool(permission="write")
    def write(value: int) -> int:
        """Write.

        Args:
            value: What to write.
        """
        ran.append(value)
        return value

    dispatcher = ToolDispatcher(ToolRegistry([write]), journal=StoreJournal(store))
    with pytest.raises(LeaseLostToolError, match="another runner owns the task"):
        asyncio.run(dispatcher.call("write", {"value": 1}, idempotency_key="t:w", fence=Fence(1, 0, "old")))
    assert ran == []


def test_lease_errors_cross_process_boundaries_intact():
    import pickle

    from agents.tools.dispatch import LeaseLostToolError

    for error in (LeaseLostError("t", 1, 2), LeaseLostToolError("tool 'w' was not run", tool_name="w")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error)
    assert pickle.loads(pickle.dumps(LeaseLostError("t", 1, 2))).current == 2


def test_create_tasks_writes_a_burst_in_one_transaction_and_refuses_only_a_duplicate(tmp_path):
    with Store(tmp_path / "burst.db") as s:
        s.create_task("dup", "earlier", {})
        commits = []
        s._backend._conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
        made = s.create_tasks([("a", "task a"), ("dup", "again"), ("b", "task b")], {"k": 1}, lease_owner="me")
        assert len(commits) == 1
        assert made[0] == 1 and made[2] == 1
        assert isinstance(made[1], TaskExistsError) and "dup" in str(made[1])
        assert s.get_task("a").task == "task a" and s.get_task("b").config == {"k": 1}
        assert s.get_task("dup").task == "earlier"
        assert s.lease_holder("b").owner == "me"
