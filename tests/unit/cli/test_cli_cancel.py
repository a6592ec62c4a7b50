"""`tetrarch cancel TASK_ID [--store PATH]` (issue 62, item 3): stops a task another process runs, through the
store, without starting a model or Ray; says so when there is nothing to cancel; an unknown id is one
`tetrarch:` line."""

from __future__ import annotations

import asyncio
import importlib
import json
import threading

import pytest

import agents
from agents import Orchestrator, RuntimeConfig, tool
from agents.llm import FunctionLLM, LLMRequest
from agents.store import Store

cli = importlib.import_module("agents.cli.main")  # the package re-exports main(), shadowing the module

STARTED = threading.Event()
FEED_S = [60.0]
NOTES: list[str] = []


@tool(permission="read")
def note(text: str) -> str:
    """Notes a text and echoes it.

    Args:
        text: What to note.
    """
    NOTES.append(text)
    return text


@tool(permission="read")
async def feed(label: str) -> str:
    """Waits for a slow feed, then echoes the label.

    Args:
        label: Text to return.
    """
    STARTED.set()
    await asyncio.sleep(FEED_S[0])
    return label


def _script(request: LLMRequest) -> str:
    if request.role == "router":
        return json.dumps({"route": "plan", "confidence": 0.9, "reason": "a feed", "answer": None})
    if request.role == "planner":
        return json.dumps({"steps": [
            {"step_id": 1, "description": "a note", "tool_name": "note", "tool_input": {"text": "hi"},
             "depends_on": []},
            {"step_id": 2, "description": "the feed", "tool_name": "feed",
             "tool_input": {"label": "$step_1_result"}, "depends_on": [1]}]})
    return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                       "action": "accept", "retry_details": None, "feedback": "", "answer": "fed"})


@pytest.fixture
def nothing_starts(monkeypatch):
    def must_not_start(*args, **kwargs):
        raise AssertionError("tetrarch cancel started a model or an Orchestrator")

    monkeypatch.setattr(cli, "build_llm", must_not_start)
    monkeypatch.setattr(agents, "Orchestrator", must_not_start)


@pytest.fixture(autouse=True)
def _fresh():
    STARTED.clear()
    FEED_S[0] = 60.0
    NOTES.clear()


def test_cancel_stops_a_task_another_process_runs(tmp_path, capsys, nothing_starts):
    orch = Orchestrator(llm=FunctionLLM(_script), tools=[note, feed],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")
    try:
        handle = orch.submit("Read the feed")
        assert STARTED.wait(20)
        assert cli.main(["cancel", handle.task_id, "--store", str(tmp_path / "t.db")]) == 0
        out = capsys.readouterr().out
        assert f"task {handle.task_id} cancelled by tetrarch cancel" in out
        result = handle.result(timeout=5)
        assert (result.status, result.cancelled_by) == ("cancelled", "tetrarch cancel")

        assert cli.main(["cancel", handle.task_id, "--store", str(tmp_path / "t.db"), "--json"]) == 0
        again = json.loads(capsys.readouterr().out)
        assert again["cancelled"] is False and again["status"] == "cancelled"
        assert "already cancelled (by tetrarch cancel)" in again["message"]
        with Store(tmp_path / "t.db") as store:
            assert store.get_task(handle.task_id).status == "cancelled"
    finally:
        orch.shutdown()


def test_a_task_nobody_runs_any_more_is_cancelled_and_resumes(tmp_path, capsys):
    """Its Orchestrator shut down mid-step: the task stays "running" in the store with nobody at it."""
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    first = Orchestrator(llm=FunctionLLM(_script), tools=[note, feed], config=config, runtime="inprocess")
    task_id = first.submit("Read the feed").task_id
    assert STARTED.wait(20)
    first.shutdown()
    assert cli.main(["cancel", task_id, "--store", str(tmp_path / "t.db")]) == 0
    assert "cancelled by tetrarch cancel" in capsys.readouterr().out
    with Store(tmp_path / "t.db") as store:
        result = store.get_result(task_id)
    assert result.status == "cancelled" and [s.status for s in result.steps] == ["completed", "cancelled"]
    FEED_S[0] = 0.0
    with Orchestrator(llm=FunctionLLM(_script), tools=[note, feed], config=config,
                      runtime="inprocess") as again:
        assert again.resume(task_id).result(timeout=20).status == "accepted"
    assert NOTES == ["hi"]  # the completed step did not run again


def test_nothing_to_cancel_and_unknown_ids(tmp_path, capsys, nothing_starts):
    path = tmp_path / "t.db"
    with Store(path) as store:
        store.create_task("done-1", "add 2 and 2", {})
        finished = {"task_id": "done-1", "task": "add 2 and 2", "submitted_at": 1.0, "phase": "done",
                    "status": "accepted", "stopped_reason": "accepted"}
        store.commit("done-1", [], checkpoint=finished, status="accepted")
    assert cli.main(["cancel", "done-1", "--store", str(path)]) == 0
    assert "had already finished (accepted); nothing to cancel" in capsys.readouterr().out
    assert cli.main(["cancel", "no-such-task", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tetrarch: no task 'no-such-task' in this store")
    assert cli.main(["cancel", "x", "--store", str(tmp_path / "missing.db")]) == 2
