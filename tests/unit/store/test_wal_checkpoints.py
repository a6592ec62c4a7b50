"""The SQLite store's log is copied into its file by a thread of its own (``agents.store.wal_checkpoints``): a
few writes start nothing, enough rows wake the thread, which copies the log into the database file while the
writer goes on, and the store's ``close`` stops it; every committed row reads back either way."""

from __future__ import annotations

import threading
import time

from agents.store import Store
from agents.store.wal_checkpoints import CHECKPOINT_ROWS


def _checkpointers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tetrarch-wal-checkpoint"]


def _create(store: Store, first: int, n: int) -> None:
    tasks = [(f"t{i:05d}", "task " + "x" * 200) for i in range(first, first + n)]
    store.create_tasks(tasks, {}, lease_owner="me")


def test_a_few_writes_start_no_checkpointer(tmp_path):
    before = len(_checkpointers())
    with Store(tmp_path / "s.db") as store:
        _create(store, 0, 10)
        assert len(_checkpointers()) == before and store._backend._checkpoints.done == 0


def test_enough_rows_are_copied_into_the_file_off_the_writers_thread_and_close_stops_it(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        checkpoints = store._backend._checkpoints
        size_before = path.stat().st_size
        _create(store, 0, CHECKPOINT_ROWS)  # a task row and its lease row each: past the threshold
        thread = checkpoints._thread
        assert thread is not None and thread.is_alive() and thread is not threading.current_thread()
        deadline = time.monotonic() + 30  # a hang guard, not a speed bound
        while checkpoints.done == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert checkpoints.done >= 1 and path.stat().st_size > size_before  # the log's pages reached the file
        _create(store, CHECKPOINT_ROWS, 5)  # the writer goes on
    assert not thread.is_alive()
    with Store(path) as again:
        assert again.get_task(f"t{CHECKPOINT_ROWS + 4:05d}") is not None
        assert again.get_task("t00000") is not None
