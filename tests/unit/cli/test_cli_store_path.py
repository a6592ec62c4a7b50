"""Regression of issue 19: `tetrarch tasks --store <typo>` created an empty database and listed nothing."""

from __future__ import annotations

from agents.cli.main import main
from agents.store import Store


def test_read_commands_refuse_a_store_that_does_not_exist(tmp_path, capsys):
    typo = tmp_path / "tetrach.db"
    assert main(["tasks", "--store", str(typo)]) == 2
    assert "no store at" in capsys.readouterr().err and not typo.exists()
    assert main(["resume", "some-task", "--store", str(typo)]) == 2
    capsys.readouterr()
    assert main(["trace", "some-task", "--store", str(typo)]) == 2
    assert capsys.readouterr().err.startswith("tetrarch: no store at")
    assert not typo.exists()


def test_tasks_lists_an_existing_store(tmp_path, capsys):
    path = tmp_path / "tetrarch.db"
    store = Store(path)
    store.create_task("t-1", "Which is bigger, Paris or Rome?", {})
    store.close()
    assert main(["tasks", "--store", str(path)]) == 0
    assert "t-1" in capsys.readouterr().out
