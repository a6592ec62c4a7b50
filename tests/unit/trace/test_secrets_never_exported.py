"""A value passed in a tool's ``secret_params`` never leaves memory: not in the database bytes, the events
(stored or live), the checkpoints, the LLM-call records, the result, nor any trace export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import wire
from support.traced import run_stored

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.store import REDACTED
from agents.tools import tool
from agents.trace.chrome import to_chrome_trace
from agents.trace.cli import load_trace
from agents.trace.html import render_html

SECRET = "tok-7f3a9c1e5b"
SEEN: list[str] = []


@tool(secret_params=("token",))
def fetch_private(resource: str, token: str) -> str:
    """Fetch a private resource.

    Args:
        resource: Name of the resource.
        token: Bearer token for the private API.
    """
    SEEN.append(token)
    # A careless API echoes the credential back: the output must be redacted too.
    return f"{resource}: 42 rows (authorised as {token})"


@tool
def count_rows(text: str) -> int:
    """Count the rows a fetch reported.

    Args:
        text: The fetch result.
    """
    return int(text.split(":")[1].split()[0])


PLAN = wire.plan(wire.step(1, "fetch_private", {"resource": "sales", "token": SECRET}),
                 wire.step(2, "count_rows", {"text": "$step_1_result"}, deps=[1]))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    db = tmp_path_factory.mktemp("secret") / "tasks.db"
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": PLAN,
                                 "reflector": wire.reflection(answer="42 rows")}[r.role])
    task_id, result, live = run_stored(db, llm, "How many rows does the private sales table have?",
                                       tools=[fetch_private, count_rows], config=RuntimeConfig(store_path=db))
    return db, task_id, result, live


def raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.rglob("*") if p.is_file())


def test_the_tool_still_received_the_real_secret(run):
    _, _, result, _ = run
    assert result.status == "accepted" and SECRET in SEEN
    assert [s.output for s in result.steps][1] == 42


def test_database_and_blob_bytes_hold_no_secret(run):
    db, *_ = run
    data = raw_bytes(db)
    assert SECRET.encode() not in data
    assert REDACTED.encode() in data


def test_events_live_and_stored_and_result_hold_no_secret(run):
    db, task_id, result, live = run
    assert SECRET not in json.dumps(live)
    assert any(REDACTED in json.dumps(e) for e in live if e["type"] == "plan_step")
    assert SECRET not in result.model_dump_json()
    trace = load_trace(task_id, db)
    assert SECRET not in json.dumps([e.model_dump(mode="json") for e in trace.events])


def test_no_trace_export_holds_the_secret(run, tmp_path):
    db, task_id, *_ = run
    trace = load_trace(task_id, db)
    assert SECRET not in render_html(trace)
    assert SECRET not in json.dumps(to_chrome_trace(trace))
    from agents.trace.gantt import plot_gantt

    png = tmp_path / "g.png"
    plot_gantt(trace.role_timeline() + trace.timeline(), png, title=task_id)
    assert SECRET.encode() not in png.read_bytes()


def test_a_resumed_step_never_runs_with_the_placeholder(tmp_path):
    """Secrets are not stored, so a step that must run again after a resume fails with a clear reason."""
    import asyncio

    from agents.roles.executor import Executor
    from agents.roles.messages import StepRequest
    from planning.models import PlanStep

    ex = Executor([fetch_private], FunctionLLM(lambda r: "unused"), RuntimeConfig(store_path=tmp_path / "x.db").executor_options())
    step = PlanStep(step_id=1, description="fetch", tool_name="fetch_private",
                    tool_input={"resource": "sales", "token": REDACTED}, depends_on=[])
    before = len(SEEN)
    outcome = asyncio.run(ex.run(StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1,
                                             timeout_s=5), {}))
    assert not outcome.ok and outcome.error_kind == "permanent"
    assert "redacted from the checkpoint" in outcome.error and "submit the task again" in outcome.error
    assert len(SEEN) == before
