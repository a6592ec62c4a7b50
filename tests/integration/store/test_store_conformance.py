"""The store contract, one suite for both backends (SQLite file; a real PostgreSQL server the tests start):
tasks, the event log, checkpoints and deltas, step outputs, results, leases with fencing, the idempotency
journal's claims, LLM call records, redaction, migrations — and concurrent writers racing for a lease and a
claim, and a stale runner fenced out while it writes.

The PostgreSQL half is skipped only where no server binary exists (the skip says how to get one).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agents.events import StepStartedPayload, TaskSubmittedPayload, make_event
from agents.idempotency import Fence
from agents.results import TaskResult, Timings
from agents.store import (
    SCHEMA_VERSION,
    EventSequenceError,
    LeaseLostError,
    Store,
    StoreTaskNotFoundError,
    TaskBatch,
    TaskExistsError,
)
from agents.store.fencing import Claimed, Held, LeaseLost, Recorded
from support.together import on_threads


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def where(request, tmp_path) -> Path | str:
    """Where a store lives: a fresh SQLite file, or a fresh database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return tmp_path / "conformance.db"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(where):
    with Store(where, secrets=["s3cret-token-value"], blob_threshold_bytes=1024) as s:
        s.create_task("t", "the task", {"api_key": "s3cret-token-value"})
        yield s


def _event(seq: int, task_id: str = "t", step: int = 1):
    return make_event(StepStartedPayload(step_id=step, attempt=1, tool_name="x", plan_version=1), task_id=task_id,
                      seq=seq, ts=float(seq))


def test_a_burst_of_tasks_is_created_together_and_a_duplicate_is_refused_alone(store):
    made = store.create_tasks([("a", "first s3cret-token-value"), ("t", "again"), ("b", "second")],
                              {"api_key": "s3cret-token-value"}, lease_owner="shard-0")
    assert made[0] == made[2] == 1 and isinstance(made[1], TaskExistsError)
    assert store.get_task("a").task == "first [REDACTED]" and store.get_task("b").config == {"api_key": "[REDACTED]"}
    assert store.get_task("t").task == "the task" and store.lease_holder("a").owner == "shard-0"
    assert store.unfinished_task_ids() == ["t", "a", "b"]


def test_tasks_are_created_once_listed_and_deleted(store):
    assert store.schema_version == SCHEMA_VERSION
    with pytest.raises(TaskExistsError):
        store.create_task("t", "again", {})
    store.create_task("u", "second", {})
    assert store.get_task("t").config == {"api_key": "[REDACTED]"}
    assert store.unfinished_task_ids() == ["t", "u"]
    assert [s.task_id for s in store.list_tasks()] == ["u", "t"]
    assert store.get_task("nope") is None
    with pytest.raises(StoreTaskNotFoundError):
        store.acquire_lease("nope")
    assert store.delete_task("u") and not store.delete_task("u")
    assert store.unfinished_task_ids() == ["t"]


def test_the_event_log_is_append_only_and_gapless(store):
    stored = store.commit("t", [make_event(TaskSubmittedPayload(task="s3cret-token-value"), task_id="t", seq=1,
                                           ts=0.0), _event(2)], checkpoint={"phase": "route"}, status="running")
    assert stored[0].payload.task == "[REDACTED]"
    with pytest.raises(EventSequenceError):
        store.commit("t", [_event(4)])
    with pytest.raises(EventSequenceError):
        store.commit("t", [_event(2)])
    assert store.last_seq("t") == 2
    assert [e.seq for e in store.events("t")] == [1, 2] and [e.seq for e in store.events("t", after_seq=1)] == [2]
    assert store.events("t")[0].payload.task == "[REDACTED]"


def test_a_checkpoint_is_its_last_full_copy_with_later_deltas_applied(store):
    full = {"phase": "execute", "steps": {"1": {"status": "pending"}}, "plan_steps": [{"step_id": 1}]}
    store.write_batch(TaskBatch("t", None, events=[store.event_row("t", _event(1))[0]], checkpoint=(1, full)))
    store.write_batch(TaskBatch("t", None, events=[store.event_row("t", _event(2))[0]],
                                delta=(2, {"steps": {"1": {"status": "completed"}}, "plan_from": 1,
                                           "plan_steps": [{"step_id": 2}]})))
    state = store.load_checkpoint("t")
    assert state["steps"]["1"]["status"] == "completed" and state["plan_steps"] == [{"step_id": 1}, {"step_id": 2}]
    assert store.checkpoint_version("t") == 2
    store.write_batch(TaskBatch("t", None, checkpoint=(2, {"phase": "reflect"})))
    assert store.load_checkpoint("t") == {"phase": "reflect"} and store.checkpoint_version("t") == 3


def test_step_outputs_keep_every_attempt_and_large_ones_round_trip(store):
    big = {"rows": [f"row-{i}" for i in range(500)]}
    store.put_step_output("t", 1, 1, 1, "first")
    store.put_step_output("t", 1, 1, 2, big)
    store.put_step_output("t", 1, 2, 1, {"token": "s3cret-token-value"})
    store.put_step_output("t", 1, 2, 1, {"v": 2})  # the same attempt written again replaces it
    assert store.get_step_outputs("t") == {(1, 1): big, (1, 2): {"v": 2}}
    assert store.get_step_outputs("t", plan_version=2) == {}


def test_the_result_is_stored_and_a_resume_clears_it(store):
    result = TaskResult(task_id="t", status="accepted", stopped_reason="accepted", timings=Timings(wall_s=1.5))
    store.finish_task("t", result)
    assert store.get_task("t").status == "accepted" and store.get_result("t").timings.wall_s == 1.5
    assert store.unfinished_task_ids() == []
    store.commit("t", [], checkpoint={"phase": "execute"}, status="running")
    assert store.get_result("t") is None and store.unfinished_task_ids() == ["t"]


def test_llm_call_records_are_numbered_in_order(store):
    assert [store.record_llm_call("t", {"role": r}) for r in ("router", "planner")] == [1, 2]
    assert [c["role"] for c in store.llm_calls("t")] == ["router", "planner"]


def test_a_stale_generation_can_neither_write_nor_finish(store):
    assert store.acquire_lease("t", "old") == 1
    store.write_batch(TaskBatch("t", 1, events=[store.event_row("t", _event(1))[0]], checkpoint=(1, {"p": 1})))
    assert store.acquire_lease("t", "new") == 2
    with pytest.raises(LeaseLostError, match="generation 2, not 1"):
        store.write_batch(TaskBatch("t", 1, events=[store.event_row("t", _event(2))[0]], checkpoint=(2, {"p": 2}),
                                    outputs=[store.output_row("t", 1, 1, 1, "stale")]))
    assert store.last_seq("t") == 1 and store.load_checkpoint("t") == {"p": 1} and store.get_step_outputs("t") == {}
    result = TaskResult(task_id="t", status="accepted", stopped_reason="accepted", timings=Timings(wall_s=1.0))
    with pytest.raises(LeaseLostError):
        store.finish_task("t", result, generation=1)
    store.finish_task("t", result, generation=2)
    assert store.get_result("t").status == "accepted"


def test_a_cancel_takes_the_lease_the_runner_then_finds_it_no_longer_holds(store):
    """What cancelling through the store rests on: the takeover moves the lease, the runner's watch reads which of
    its tasks' leases it still holds, and the revoked generation of a cancelled run holds none."""
    store.create_task("u", "second", {}, lease_owner="runner")
    assert store.acquire_lease("t", "runner") == 1
    assert store.leases_held("runner", ["t", "u", "nope"]) == {"t", "u"}
    assert store.leases_held("runner", []) == set()
    generation = store.acquire_lease("t", "canceller")
    assert store.leases_held("runner", ["t", "u"]) == {"u"}
    result = TaskResult(task_id="t", status="cancelled", stopped_reason="cancelled", cancelled_by="the API")
    store.finish_task("t", result, generation=generation)
    assert store.revoke_lease("t", generation, "cancelled by the API")
    assert store.leases_held("canceller", ["t"]) == set()
    assert store.get_task("t").status == "cancelled" and store.get_result("t").cancelled_by == "the API"
    assert [s.task_id for s in store.list_tasks(status="cancelled")] == ["t"] and store.unfinished_task_ids() == ["u"]


def test_a_group_commit_refuses_a_stale_batch_alone(store):
    """``write_batches``: several tasks' batches in one transaction, each fenced on its own; the refused one is
    undone entirely (its events, checkpoint and outputs) and reported in its place, the others commit."""
    store.create_task("u", "second", {})
    store.create_task("w", "third", {})
    assert store.acquire_lease("t", "old") == 1 and store.acquire_lease("t", "new") == 2
    assert store.acquire_lease("u", "mine") == 1
    batches = [TaskBatch("u", 1, events=[store.event_row("u", _event(1, "u"))[0]], checkpoint=(1, {"u": 1})),
               TaskBatch("t", 1, events=[store.event_row("t", _event(1))[0]], checkpoint=(1, {"t": "stale"}),
                         outputs=[store.output_row("t", 1, 1, 1, "stale")]),
               TaskBatch("w", None, events=[store.event_row("w", _event(1, "w"))[0]],
                         outputs=[store.output_row("w", 1, 1, 1, "x" * 2000)]),
               TaskBatch("nope", None, events=[store.event_row("nope", _event(1, "nope"))[0]]),
               TaskBatch("w", None)]
    errors = store.write_batches(batches)
    assert [type(e).__name__ if e else None for e in errors] == [None, "LeaseLostError", None,
                                                                  "StoreTaskNotFoundError", None]
    assert store.last_seq("u") == 1 and store.load_checkpoint("u") == {"u": 1}
    assert store.last_seq("t") == 0 and store.load_checkpoint("t") is None and store.get_step_outputs("t") == {}
    assert store.last_seq("w") == 1 and store.get_step_outputs("w") == {(1, 1): "x" * 2000}


def test_a_group_commit_refuses_an_out_of_order_batch_alone_and_writes_none_of_it(store):
    """The checks that refuse a batch (lease, task, event order) run before any of it is written, so a
    refused batch in a group leaves no trace (no event, checkpoint, delta, output, LLM record or status) and
    the batches before and after it commit."""
    store.create_task("u", "second", {})
    store.write_batch(TaskBatch("t", None, events=[store.event_row("t", _event(1))[0]]))
    gap = TaskBatch("t", None, events=[store.event_row("t", _event(3))[0]], checkpoint=(3, {"t": "gap"}),
                    outputs=[store.output_row("t", 1, 1, 1, "gap")], llm_calls=[("planner", {"x": 1})],
                    status="running")
    errors = store.write_batches([TaskBatch("u", None, events=[store.event_row("u", _event(1, "u"))[0]]), gap,
                                  TaskBatch("u", None, events=[store.event_row("u", _event(2, "u"))[0]],
                                            delta=(2, {"fields": {"u": 2}}))])
    assert [type(e).__name__ if e else None for e in errors] == [None, "EventSequenceError", None]
    assert store.last_seq("t") == 1 and store.load_checkpoint("t") is None
    assert store.get_step_outputs("t") == {} and store.llm_calls("t") == []
    assert store.get_task("t").status == "submitted"
    assert store.last_seq("u") == 2


def test_the_journal_claims_before_the_call_and_records_after(where):
    now = [100.0]
    with Store(where, clock=lambda: now[0]) as store:
        store.create_task("t", "task", {})
        store.acquire_lease("t", "a")
        first, second = Fence(1, 0, "exec-0"), Fence(1, 0, "exec-1")
        assert store.journal_claim("t:k", "t", first, grace_s=5.0) == Claimed()
        assert store.journal_claim("t:k", "t", first, grace_s=5.0) == Claimed()  # a retried call of the claimant
        assert isinstance(store.journal_claim("t:k", "t", second, grace_s=5.0), Held)
        assert store.journal_record("t:k", second, "not mine") is False
        assert store.journal_record("t:k", first, {"wrote": 1}) is True
        assert store.journal_claim("t:k", "t", second, grace_s=5.0) == Recorded('{"wrote":1}')
        # an unrecorded claim of an older generation is taken over only after the grace period
        assert store.journal_claim("t:j", "t", first, grace_s=5.0) == Claimed()
        store.acquire_lease("t", "b")
        assert store.journal_claim("t:j", "t", first, grace_s=5.0) == LeaseLost(1, 2)
        newer = Fence(2, 0, "exec-2")
        now[0] = 103.0
        assert isinstance(store.journal_claim("t:j", "t", newer, grace_s=5.0), Held)
        now[0] = 106.0
        assert store.journal_claim("t:j", "t", newer, grace_s=5.0) == Claimed()
        assert store.journal_record("t:j", first, "late") is False  # the old claim was taken over
        assert store.journal_put("t:p", "t", 1) is True and store.journal_put("t:p", "t", 2) is False
        assert store.journal_get("t:p").output == 1 and store.journal_get("t:j") is None


def test_concurrent_takeovers_get_distinct_generations_and_only_the_last_writes(where):
    with Store(where) as setup:
        setup.create_task("t", "task", {})
    stores = [Store(where) for _ in range(6)]  # one connection (pool) each: as many runners in as many processes
    start, got = threading.Barrier(len(stores)), []

    def take(store: Store) -> None:
        start.wait()
        got.append(store.acquire_lease("t", f"runner-{len(got)}"))

    threads = [threading.Thread(target=take, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(got) == list(range(1, len(stores) + 1))
    wins = []
    for generation in got:
        try:
            stores[0].write_batch(TaskBatch("t", generation, checkpoint=(0, {"by": generation})))
            wins.append(generation)
        except LeaseLostError:
            pass
    assert wins == [len(stores)] and stores[0].load_checkpoint("t") == {"by": len(stores)}
    for s in stores:
        s.close()


def test_concurrent_claims_of_one_key_give_it_to_exactly_one_claimant(where):
    with Store(where) as setup:
        setup.create_task("t", "task", {})
        setup.acquire_lease("t", "runner")
    stores = [Store(where) for _ in range(6)]
    keys = [f"t:k{i}" for i in range(25)]
    start, outcomes = threading.Barrier(len(stores)), {k: [] for k in keys}

    def race(n: int, store: Store) -> None:
        start.wait()
        for key in keys:
            outcomes[key].append(store.journal_claim(key, "t", Fence(1, 0, f"exec-{n}"), grace_s=5.0))

    threads = [threading.Thread(target=race, args=(n, s)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for key in keys:
        assert sum(o == Claimed() for o in outcomes[key]) == 1, (key, outcomes[key])
        assert sum(isinstance(o, Held) for o in outcomes[key]) == len(stores) - 1
    for s in stores:
        s.close()


def test_a_stale_runner_writing_in_a_loop_is_fenced_out_at_the_takeover(where):
    """The old runner writes event after event; the moment a new runner's takeover returns, the log holds every
    write the old one will ever make: the new runner continues it without a gap or a clash."""
    with Store(where) as setup:
        setup.create_task("t", "task", {})
        old_gen = setup.acquire_lease("t", "old")
    old, new = Store(where), Store(where)
    written, stopped, first_done = [], [], threading.Event()

    def old_runner() -> None:
        seq = 0
        while True:
            seq += 1
            try:
                old.write_batch(TaskBatch("t", old_gen, events=[old.event_row("t", _event(seq))[0]]))
            except LeaseLostError as exc:
                stopped.append(exc)
                return
            written.append(seq)
            first_done.set()

    runner = threading.Thread(target=old_runner)
    runner.start()
    assert first_done.wait(30)
    generation = new.acquire_lease("t", "new")
    after = new.last_seq("t")
    new.write_batch(TaskBatch("t", generation, events=[new.event_row("t", _event(after + 1, step=2))[0]]))
    runner.join(timeout=60)
    assert stopped and stopped[0].current == generation
    assert written == list(range(1, after + 1))  # nothing of the old runner landed after the takeover
    assert [e.seq for e in new.events("t")] == list(range(1, after + 2))
    old.close()
    new.close()


def test_stores_opened_at_once_on_a_new_database_migrate_it_once(where):
    stores, errors = on_threads(lambda: Store(where))
    assert errors == [] and {s.schema_version for s in stores} == {SCHEMA_VERSION}
    for s in stores:
        s.close()


def test_scrub_rewrites_what_was_written_before_a_secret_was_known(store):
    store.commit("t", [make_event(TaskSubmittedPayload(task="use tok-abcdef-123456"), task_id="t", seq=1, ts=0.0)])
    report = store.scrub("t", ["tok-abcdef-123456"])
    assert report.rows >= 1
    assert store.events("t")[0].payload.task == "use [REDACTED]"
