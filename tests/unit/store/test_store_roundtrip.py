"""Round trips of every Store method, the errors it raises, and the schema version."""

from __future__ import annotations

import asyncio
import itertools
import pickle
import sqlite3

import pytest

from agents.errors import UnknownTaskError, UsageError
from agents.events import (
    StepFinishedPayload,
    StepStartedPayload,
    TaskFinishedPayload,
    TaskSubmittedPayload,
    make_event,
)
from agents.llm.base import Usage
from agents.results import TaskResult, Timings, UsageReport
from agents.store import (
    SCHEMA_VERSION,
    BlobMissingError,
    InvalidWriteError,
    JournalRecord,
    SchemaVersionError,
    Store,
    StoreClosedError,
    StoreJournal,
    StoreSerializationError,
    StoreTaskNotFoundError,
    TaskExistsError,
    TaskRow,
    schema,
)


class FakeClock:
    def __init__(self) -> None:
        self._ticks = itertools.count(1000)

    def __call__(self) -> float:
        return float(next(self._ticks))


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "sub" / "dir" / "t.db", clock=FakeClock()) as s:
        yield s


def submitted(task_id: str, seq: int = 1, task: str = "do it"):
    return make_event(TaskSubmittedPayload(task=task), task_id=task_id, seq=seq, ts=float(seq))


def started(task_id: str, seq: int, step_id: int = 1):
    return make_event(StepStartedPayload(step_id=step_id, attempt=1, tool_name="calculator"),
                      task_id=task_id, seq=seq, ts=float(seq))


def result_for(task_id: str, status: str = "accepted") -> TaskResult:
    usage = UsageReport().add("planner", Usage(llm_calls=1, input_tokens=100, output_tokens=20))
    return TaskResult(task_id=task_id, status=status, stopped_reason="accepted" if status == "accepted" else "refused",
                      answer="4", usage=usage, timings=Timings(wall_s=2.5, submitted_at=1.0))


def test_parent_directory_is_created_and_file_is_wal(store):
    assert store.path.exists() and store.path.parent.name == "dir"
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.schema_version == SCHEMA_VERSION == 2


def test_durable_selects_full_synchronous(tmp_path):
    for durable, expected in ((False, 1), (True, 2)):  # NORMAL = 1, FULL = 2
        with Store(tmp_path / f"{durable}.db", durable=durable) as s, s._read() as conn:
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == expected
            assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_create_and_get_task(store):
    store.create_task("t1", "add 2 and 2", {"max_replans": 1, "nested": {"a": [1, 2]}})
    row = store.get_task("t1")
    assert row == TaskRow(task_id="t1", task="add 2 and 2", status="submitted", created_at=1000.0,
                          updated_at=1000.0, config={"max_replans": 1, "nested": {"a": [1, 2]}})
    assert store.get_task("nope") is None
    with pytest.raises(TaskExistsError, match="already exists.*orch.resume"):
        store.create_task("t1", "again", {})


def test_commit_appends_events_and_versions_the_checkpoint(store):
    store.create_task("t1", "x", {})
    assert (store.last_seq("t1"), store.checkpoint_version("t1"), store.load_checkpoint("t1")) == (0, 0, None)
    store.commit("t1", [submitted("t1")], checkpoint={"phase": "route"}, status="running")
    store.commit("t1", [started("t1", 2), started("t1", 3, step_id=2)], checkpoint={"phase": "execute"})
    store.commit("t1", [], checkpoint=None, status="running")  # status only: no new checkpoint version
    assert store.last_seq("t1") == 3
    assert store.checkpoint_version("t1") == 2
    assert store.load_checkpoint("t1") == {"phase": "execute"}
    events = store.events("t1")
    assert [type(e).__name__ for e in events] == ["TaskSubmitted", "StepStarted", "StepStarted"]
    assert events[2] == started("t1", 3, step_id=2)
    assert [e.seq for e in store.events("t1", after_seq=1)] == [2, 3]
    assert store.get_task("t1").status == "running"


def test_commit_accepts_event_dicts(store):
    store.create_task("t1", "x", {})
    store.commit("t1", [submitted("t1").model_dump(mode="json")])
    assert store.events("t1") == [submitted("t1")]


def test_commit_rejects_foreign_events_unknown_tasks_and_statuses(store):
    store.create_task("t1", "x", {})
    with pytest.raises(InvalidWriteError, match="belongs to task 'other'"):
        store.commit("t1", [submitted("other")])
    with pytest.raises(StoreTaskNotFoundError) as info:
        store.commit("ghost", [submitted("ghost")])
    assert isinstance(info.value, UnknownTaskError) and info.value.task_id == "ghost"
    with pytest.raises(InvalidWriteError, match="unknown task status 'done'; use one of submitted, running"):
        store.commit("t1", [], status="done")  # type: ignore[arg-type]
    assert store.last_seq("t1") == 0 and store.get_task("t1").status == "submitted"


def test_finish_task_and_results(store):
    store.create_task("t1", "x", {})
    assert store.get_result("t1") is None
    result = result_for("t1")
    store.finish_task("t1", result)
    assert store.get_result("t1") == result
    row = store.get_task("t1")
    assert (row.status, row.stopped_reason, row.has_result) == ("accepted", "accepted", True)
    with pytest.raises(InvalidWriteError, match="result is for task 't2'"):
        store.finish_task("t1", result_for("t2"))
    with pytest.raises(StoreTaskNotFoundError):
        store.finish_task("t2", result_for("t2"))


def test_running_again_clears_the_previous_result(store):
    store.create_task("t1", "x", {})
    store.finish_task("t1", result_for("t1", "refused"))
    store.commit("t1", [submitted("t1")], checkpoint={"run": 2}, status="running")
    assert store.get_result("t1") is None
    assert store.unfinished_task_ids() == ["t1"]
    assert store.list_tasks()[0].total_tokens is None


def test_unfinished_and_listing(store):
    for i in range(5):
        store.create_task(f"t{i}", f"task {i}", {})
    store.commit("t1", [submitted("t1")], status="running")
    store.finish_task("t2", result_for("t2"))
    store.commit("t3", [submitted("t3")], status="escalated")  # waiting for a human: not resumable
    store.finish_task("t4", result_for("t4", "refused"))
    assert store.unfinished_task_ids() == ["t0", "t1"]
    listed = store.list_tasks()
    assert [s.task_id for s in listed] == ["t4", "t3", "t2", "t1", "t0"]  # newest first
    done = store.list_tasks(status="accepted")
    assert [(s.task_id, s.wall_s, s.total_tokens) for s in done] == [("t2", 2.5, 120)]
    assert [s.task_id for s in store.list_tasks(limit=2)] == ["t4", "t3"]
    assert store.list_tasks(status="failed") == []
    assert listed[0].model_dump()["task"] == "task 4"  # what `tetrarch tasks --json` prints
    with pytest.raises(InvalidWriteError):
        store.list_tasks(status="finished")  # type: ignore[arg-type]


def test_step_outputs_latest_attempt_per_plan_version(store):
    store.create_task("t1", "x", {})
    store.put_step_output("t1", 1, 1, 1, {"v": "first"})
    store.put_step_output("t1", 1, 1, 2, {"v": "retried"})
    store.put_step_output("t1", 1, 2, 1, [1, 2.5, None, True])
    store.put_step_output("t1", 2, 1, 1, "replanned")
    assert store.get_step_outputs("t1") == {(1, 1): {"v": "retried"}, (1, 2): [1, 2.5, None, True],
                                            (2, 1): "replanned"}
    assert store.get_step_outputs("t1", plan_version=2) == {(2, 1): "replanned"}
    assert store.get_step_outputs("t1", plan_version=3) == {}
    store.put_step_output("t1", 1, 2, 1, "overwritten")  # same attempt again: the last write wins
    assert store.get_step_outputs("t1", 1)[(1, 2)] == "overwritten"
    with pytest.raises(StoreTaskNotFoundError):
        store.put_step_output("ghost", 1, 1, 1, "x")


def test_outputs_that_are_not_json_are_refused_clearly(store):
    store.create_task("t1", "x", {})
    with pytest.raises(StoreSerializationError, match="cannot store the output of step 3.*JSON-friendly"):
        store.put_step_output("t1", 1, 3, 1, object())
    assert store.get_step_outputs("t1") == {}


def test_large_outputs_go_to_blob_files(tmp_path):
    with Store(tmp_path / "b.db", blob_threshold_bytes=1000) as store:
        store.create_task("t1", "x", {})
        big = {"rows": ["y" * 50] * 100}
        store.put_step_output("t1", 3, 4, 2, big)
        store.put_step_output("t1", 3, 5, 1, "small")
        blob = tmp_path / "b.db.blobs" / "t1" / "v3-s4-a2.json"
        assert blob.exists() and len(blob.read_bytes()) > 1000
        assert not list(blob.parent.glob(".tmp-*")), "the temp file is renamed into place"
        with sqlite3.connect(tmp_path / "b.db") as raw:
            rows = raw.execute("SELECT step_id, body_json IS NULL, blob_path, size FROM step_outputs"
                               " ORDER BY step_id").fetchall()
        assert rows[0][:3] == (4, 1, "b.db.blobs/t1/v3-s4-a2.json") and rows[0][3] == len(blob.read_bytes())
        assert rows[1][:3] == (5, 0, None)
        assert store.get_step_outputs("t1") == {(3, 4): big, (3, 5): "small"}
        store.put_step_output("t1", 3, 4, 2, "now small")  # replaced: the stale file goes away
        assert not blob.exists() and store.get_step_outputs("t1")[(3, 4)] == "now small"
        store.put_step_output("t1", 3, 6, 1, big)
        (tmp_path / "b.db.blobs" / "t1" / "v3-s6-a1.json").unlink()
        with pytest.raises(BlobMissingError, match="keep the '.blobs' directory"):
            store.get_step_outputs("t1")


def test_blob_directory_of_an_unsafe_task_id_stays_inside_the_root(tmp_path):
    with Store(tmp_path / "b.db", blob_threshold_bytes=10) as store:
        store.create_task("../../escape", "x", {})
        store.put_step_output("../../escape", 1, 1, 1, "a long enough output")
        files = list((tmp_path / "b.db.blobs").rglob("*.json"))
        assert len(files) == 1 and files[0].parent.parent == tmp_path / "b.db.blobs"
        assert store.get_step_outputs("../../escape") == {(1, 1): "a long enough output"}


def test_journal_round_trip_and_exactly_once(store):
    assert store.journal_get("k") is None
    assert store.journal_put("k", "t1", {"wrote": "file.txt"}) is True
    assert store.journal_put("k", "t1", {"wrote": "other.txt"}) is False
    record = store.journal_get("k")
    assert record == JournalRecord(key="k", task_id="t1", output={"wrote": "file.txt"}, recorded_at=record.recorded_at)
    assert pickle.loads(pickle.dumps(record)) == record  # crosses Ray as an actor method's return value


def test_store_journal_adapter(store):
    journal = StoreJournal(store)

    async def scenario():
        assert await journal.get("t9:abc") is None
        await asyncio.gather(*(journal.put("t9:abc", {"n": n}) for n in range(5)))
        return await journal.get("t9:abc")

    entry = asyncio.run(scenario())
    assert entry.key == "t9:abc" and entry.output in [{"n": n} for n in range(5)]
    assert entry.recorded_at >= 1000.0
    assert store.journal_get("t9:abc").task_id == "t9"


def test_llm_call_records(store):
    store.create_task("t1", "x", {})
    records = [{"role": "router", "messages": [{"role": "user", "content": "hi"}], "reply_text": "{}"},
               {"role": "planner", "messages": [], "reply_text": '{"steps": []}', "usage": {"llm_calls": 1}}]
    assert [store.record_llm_call("t1", r) for r in records] == [1, 2]
    assert store.llm_calls("t1") == records
    assert store.llm_calls("t2") == []
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("SELECT seq, role FROM llm_calls ORDER BY seq").fetchall() == [(1, "router"), (2, "planner")]
    with pytest.raises(StoreTaskNotFoundError):
        store.record_llm_call("t2", records[0])


def test_delete_task_removes_everything_and_vacuum(tmp_path):
    with Store(tmp_path / "d.db", blob_threshold_bytes=10) as store:
        for task_id in ("gone", "kept"):
            store.create_task(task_id, "x", {})
            store.commit(task_id, [submitted(task_id)], checkpoint={"a": 1}, status="running")
            store.put_step_output(task_id, 1, 1, 1, "a long enough output")
            store.record_llm_call(task_id, {"role": "router"})
            store.journal_put(f"{task_id}:k", task_id, 1)
        assert store.delete_task("gone") is True
        assert store.delete_task("gone") is False
        assert store.get_task("gone") is None and store.events("gone") == [] and store.load_checkpoint("gone") is None
        assert store.get_step_outputs("gone") == {} and store.llm_calls("gone") == []
        assert store.journal_get("gone:k") is None and not (tmp_path / "d.db.blobs" / "gone").exists()
        assert store.get_step_outputs("kept") == {(1, 1): "a long enough output"} and store.journal_get("kept:k")
        store.vacuum()
        assert store.last_seq("kept") == 1


def test_close_is_idempotent_and_later_use_is_a_clear_error(tmp_path):
    store = Store(tmp_path / "c.db")
    store.close()
    store.close()
    with pytest.raises(StoreClosedError, match="open a new Store") as info:
        store.last_seq("t1")
    assert isinstance(info.value, UsageError)


def test_reopen_sees_everything(tmp_path):
    with Store(tmp_path / "r.db") as store:
        store.create_task("t1", "x", {"k": 1})
        store.commit("t1", [submitted("t1")], checkpoint={"phase": "plan"}, status="running")
    with Store(tmp_path / "r.db") as again:
        assert again.events("t1") == [submitted("t1")] and again.load_checkpoint("t1") == {"phase": "plan"}
        assert again.unfinished_task_ids() == ["t1"]


def test_migration_hook_runs_missing_steps_once(tmp_path):
    calls = []

    def next_version(conn):
        calls.append("next")
        conn.execute("ALTER TABLE tasks ADD COLUMN labels TEXT")

    db = tmp_path / "m.db"
    Store(db).close()  # the current version on disk
    conn = schema.open_connection(str(db), durable=False)
    assert schema.migrate(conn, path=str(db), migrations=(*schema.MIGRATIONS, next_version)) == schema.SCHEMA_VERSION + 1
    assert schema.migrate(conn, path=str(db), migrations=(*schema.MIGRATIONS, next_version)) == schema.SCHEMA_VERSION + 1
    assert calls == ["next"] and schema.schema_version(conn) == schema.SCHEMA_VERSION + 1
    assert "labels" in [r[1] for r in conn.execute("PRAGMA table_info(tasks)")]
    conn.close()
    with pytest.raises(SchemaVersionError, match=f"schema version {schema.SCHEMA_VERSION + 1}, but this tetrarch understands up to {schema.SCHEMA_VERSION}"):
        Store(db)


def test_a_failing_migration_leaves_the_old_version(tmp_path):
    db = tmp_path / "f.db"
    Store(db).close()

    def broken(conn):
        conn.execute("ALTER TABLE tasks ADD COLUMN half TEXT")
        raise RuntimeError("boom")

    conn = schema.open_connection(str(db), durable=False)
    with pytest.raises(RuntimeError):
        schema.migrate(conn, path=str(db), migrations=(*schema.MIGRATIONS, broken))
    assert schema.schema_version(conn) == 2
    assert "half" not in [r[1] for r in conn.execute("PRAGMA table_info(tasks)")]
    conn.close()


def test_finished_event_round_trip_with_fake_clock_times(store):
    store.create_task("t1", "x", {})
    finished = make_event(TaskFinishedPayload(status="accepted", stopped_reason="accepted", answer="4"),
                          task_id="t1", seq=2, ts=9.5)
    step = make_event(StepFinishedPayload(step_id=1, attempt=1, started_at=1.0, finished_at=2.0, output_preview="4"),
                      task_id="t1", seq=1, ts=2.0)
    store.commit("t1", [step, finished], checkpoint={}, status="accepted")
    assert store.events("t1") == [step, finished]
    assert store.get_task("t1").updated_at > store.get_task("t1").created_at
