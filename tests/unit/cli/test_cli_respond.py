"""Issue 60: `tetrarch respond <unknown id>` started Ray and the model before finding out the id was unknown. The
store is asked first; a wrong id (or a task not waiting for an answer) is one `tetrarch:` line, in well under a
second, with nothing started."""

from __future__ import annotations

import importlib
import time

import pytest

import agents
from agents.store import Store

cli = importlib.import_module("agents.cli.main")  # the package re-exports main(), shadowing the module


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "t.db"
    with Store(path) as store:
        store.create_task("done-1", "add 2 and 2", {})
        store.commit("done-1", [], status="accepted")

    def must_not_start(*args, **kwargs):
        raise AssertionError("the model or the Orchestrator was started before the task id was checked")

    monkeypatch.setattr(cli, "build_llm", must_not_start)
    monkeypatch.setattr(agents, "Orchestrator", must_not_start)
    return path


@pytest.mark.parametrize("command", [["respond", "no-such-task", "approve"], ["resume", "no-such-task"]])
def test_an_unknown_task_id_is_one_line_before_anything_starts(store_path, capsys, command):
    started = time.monotonic()
    assert cli.main([*command, "--store", str(store_path)]) == 2
    assert time.monotonic() - started < 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tetrarch: no task 'no-such-task' in this store")


def test_respond_to_a_task_not_waiting_is_one_line(store_path, capsys):
    assert cli.main(["respond", "done-1", "approve", "--store", str(store_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tetrarch: task 'done-1' is 'accepted', not waiting for a human")
