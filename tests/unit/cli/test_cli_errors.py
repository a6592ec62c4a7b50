"""Every command answers bad input with one ``tetrarch:`` line on stderr, never a traceback."""

from __future__ import annotations

import pickle

import pytest

from agents.cli.main import main, one_line
from agents.errors import UnknownTaskError


@pytest.fixture
def not_a_store(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("plain text, not a SQLite database; long enough for SQLite to read a header from it. " * 4)
    return path


@pytest.mark.parametrize("command", [["cache", "list"], ["cache", "clear"], ["tasks"], ["trace", "abc"]])
def test_a_file_that_is_not_a_store_is_one_line(capsys, not_a_store, command):
    assert main([*command, "--store", str(not_a_store)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    # the task store's readers say "is not a tetrarch store" (issue 60), the plan cache's SQLite its own words
    assert err.count("\n") == 1 and err.startswith("tetrarch: ") and "file is not a database" in err


def test_a_task_missing_from_a_store_is_one_line(capsys, tmp_path):
    from agents.store import Store

    Store(tmp_path / "t.db").close()
    assert main(["trace", "nope", "--store", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tetrarch: no task 'nope'")


def test_a_bad_llm_name_is_one_line(capsys):
    assert main(["run", "hi", "--llm", "bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tetrarch: --llm 'bogus'")


def test_an_unexpected_error_is_one_line_asking_for_a_report():
    line = one_line(RuntimeError("x\ny"))
    assert line.startswith("internal error (RuntimeError: x y)") and "\n" not in line


def test_a_typed_error_keeps_its_own_words():
    error = pickle.loads(pickle.dumps(UnknownTaskError("t1")))
    assert one_line(error) == str(error)
