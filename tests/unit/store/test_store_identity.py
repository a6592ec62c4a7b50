"""Issue 60 (8): a store opened on another program's SQLite file added the store's tables to it and served an empty
list. Now a file that is not a tetrarch store is refused with nothing written, readers never create a store, and
the errors name the path the user gave."""

from __future__ import annotations

import pickle
import sqlite3

import pytest

from agents.cli.main import main
from agents.store import NoStoreError, NotAStoreError, Store, StoreOpenError
from agents.store.identity import META_TABLE


def _foreign(path):
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        raw.execute("INSERT INTO invoices VALUES (1, 9.5)")
    raw.close()
    return path.read_bytes()


def _tables(path):
    with sqlite3.connect(path) as raw:
        names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    raw.close()
    return names


@pytest.mark.parametrize("create", [True, False])
def test_another_programs_database_is_refused_and_left_untouched(tmp_path, create):
    path = tmp_path / "other.db"
    before = _foreign(path)
    with pytest.raises(NotAStoreError, match=r"other\.db is not a tetrarch store: it holds tables tetrarch did "
                                             r"not create \(invoices\)"):
        Store(path, create=create)
    assert path.read_bytes() == before and _tables(path) == {"invoices"}
    assert not (tmp_path / "other.db-wal").exists()


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("just some notes, not a database\n" * 10)
    with pytest.raises(NotAStoreError, match="not an SQLite database"):
        Store(path)
    assert path.read_text().startswith("just some notes")


def test_same_names_at_version_zero_are_someone_elses(tmp_path):
    path = tmp_path / "todo.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE tasks (id INTEGER)")
    raw.close()
    with pytest.raises(NotAStoreError, match=r"\(tasks\)"):
        Store(path)


def test_readers_never_create_a_store(tmp_path):
    missing = tmp_path / "typo.db"
    with pytest.raises(NoStoreError, match="no store at .*typo.db .the file does not exist"):
        Store(missing, create=False)
    assert not missing.exists()
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(NoStoreError, match="it is empty"):
        Store(empty, create=False)
    assert empty.read_bytes() == b"" and not (tmp_path / "empty.db-wal").exists()


def test_a_created_store_is_marked_and_reopens_for_readers(tmp_path):
    path = tmp_path / "t.db"
    with Store(path) as store:
        store.create_task("t1", "add 2 and 2", {})
    assert META_TABLE in _tables(path)
    with Store(path, create=False) as reader:
        assert [t.task_id for t in reader.list_tasks()] == ["t1"]


def test_a_store_from_before_the_mark_is_still_ours(tmp_path):
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.create_task("t1", "x", {})
    with sqlite3.connect(path) as raw:
        raw.execute(f"DROP TABLE {META_TABLE}")
        raw.execute("CREATE TABLE memory_sessions (id TEXT)")  # the memory layer's tables are ours too
    raw.close()
    with Store(path, create=False) as reader:  # a reader reads it and writes no mark
        assert reader.get_task("t1") is not None
    assert META_TABLE not in _tables(path)
    with Store(path) as writer:
        assert writer.get_task("t1") is not None
    assert META_TABLE in _tables(path)


def test_errors_name_the_path_the_user_gave_and_why(tmp_path):
    with pytest.raises(StoreOpenError, match=r"cannot open the store /proc/t\.db: the directory /proc does not "
                                             r"let anything be created in it"):
        Store("/proc/t.db")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreOpenError, match=r"file/t\.db: .*/file is a file, not a directory"):
        Store(blocker / "t.db")


def test_the_errors_survive_pickling(tmp_path):
    for error in (NotAStoreError("/a.db", "why"), NoStoreError("/b.db", "gone"), StoreOpenError("/c.db", "no")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error) and back.path == error.path


def test_cli_tasks_on_another_programs_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "other.db"
    before = _foreign(path)
    assert main(["tasks", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tetrarch: ") and "is not a tetrarch store" in err and err.count("\n") == 1
    assert path.read_bytes() == before


def test_cli_tasks_on_an_empty_file_creates_nothing(tmp_path, capsys):
    path = tmp_path / "empty.db"
    path.touch()
    assert main(["tasks", "--store", str(path)]) == 2
    assert "no store at" in capsys.readouterr().err and path.read_bytes() == b""
