"""A group commit reads the lease generations and the last event and LLM call numbers of all its batches'
tasks at once (``agents.store.batch.group_reads``); every batch is checked and numbered as it was when each
read its own: a second batch of a task follows the first, a lost lease or a missing task is refused alone,
and a group longer than one ``IN`` list is read whole."""

from __future__ import annotations

from agents.events import TaskSubmittedPayload, make_event
from agents.store import LeaseLostError, Store, StoreTaskNotFoundError, TaskBatch
from agents.store.errors import EventSequenceError


def _batch(store: Store, task_id: str, generation: int | None, seqs: list[int], calls: int = 0) -> TaskBatch:
    made = [make_event(TaskSubmittedPayload(task="t"), task_id=task_id, seq=s, ts=1.0) for s in seqs]
    events = [store.event_row(task_id, event)[0] for event in made]
    return TaskBatch(task_id, generation, events=events,
                     llm_calls=[("router", {"role": "router", "n": i}) for i in range(calls)])


def _call_seqs(store: Store, task_id: str) -> list[int]:
    with store._read() as conn:
        rows = conn.execute("SELECT seq FROM llm_calls WHERE task_id = ? ORDER BY seq", (task_id,))
        return [r[0] for r in rows]


def test_two_batches_of_one_task_in_a_group_follow_each_other(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.create_task("a", "t", {})
        gen = store.acquire_lease("a", "me")
        assert store.write_batches([_batch(store, "a", gen, [1], calls=1)]) == [None]
        errors = store.write_batches([_batch(store, "a", gen, [2, 3], calls=2),
                                      _batch(store, "a", gen, [4], calls=1),
                                      _batch(store, "a", gen, [4])])  # the third repeats seq 4: refused alone
        assert errors[:2] == [None, None] and isinstance(errors[2], EventSequenceError)
        assert [e.seq for e in store.events("a")] == [1, 2, 3, 4] and _call_seqs(store, "a") == [1, 2, 3, 4]


def test_a_lost_lease_and_a_missing_task_are_refused_alone(tmp_path):
    with Store(tmp_path / "s.db") as store:
        for task_id in ("a", "b"):
            store.create_task(task_id, "t", {})
        gen_a, gen_b = store.acquire_lease("a", "me"), store.acquire_lease("b", "me")
        store.acquire_lease("b", "someone else")
        errors = store.write_batches([_batch(store, "a", gen_a, [1]), _batch(store, "b", gen_b, [1]),
                                      _batch(store, "gone", None, [1])])
        assert errors[0] is None and isinstance(errors[1], LeaseLostError)
        assert isinstance(errors[2], StoreTaskNotFoundError)
        assert store.last_seq("a") == 1 and store.last_seq("b") == 0


def test_a_group_longer_than_one_read_is_checked_whole(tmp_path):
    ids = [f"t{i:04d}" for i in range(600)]  # past the longest IN list (512): two reads, the second padded
    with Store(tmp_path / "s.db") as store:
        store.create_tasks([(task_id, "t") for task_id in ids], {}, lease_owner="me")
        for task_id in ids[::7]:
            store.write_batch(_batch(store, task_id, None, [1], calls=1))
        batches = [_batch(store, task_id, 1, [2] if i % 7 == 0 else [1], calls=1)
                   for i, task_id in enumerate(ids)]
        batches[599] = _batch(store, ids[599], 2, [1])  # a generation it does not hold
        errors = store.write_batches(batches)
        assert errors[:599] == [None] * 599 and isinstance(errors[599], LeaseLostError)
        assert store.last_seq(ids[0]) == 2 and store.last_seq(ids[1]) == 1
        assert _call_seqs(store, ids[7]) == [1, 2]
