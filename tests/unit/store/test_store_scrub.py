"""Issue 19, bug 3: a secret given in the task text (how a planner learns a tool's token) was stored in clear in
every record written before the plan named it — the task row, ``task_submitted``, the router's LLM-call record —
and in the WAL. ``scrub_task`` rewrites them once the secret is known; the end-to-end test runs the real Supervisor
core and store (no Ray) and looks at the database's raw bytes, its WAL included."""

from __future__ import annotations

import json
from pathlib import Path

from support import wire
from support.traced import run_stored

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.store import REDACTED, Store
from agents.store.scrub import scrub_task
from agents.tools import tool
from agents.trace.cli import load_trace
from agents.trace.html import render_html

SECRET = "tok-9b1d4e77c2"
SEEN: list[str] = []


@tool(secret_params="token")
def fetch_private(resource: str, token: str) -> str:
    """Fetch a private resource.

    Args:
        resource: Name of the resource.
        token: Bearer token for the private API.
    """
    SEEN.append(token)
    return f"{resource}: 42 rows"


def raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.rglob("*") if p.is_file())


def test_a_secret_given_in_the_task_text_is_scrubbed_from_every_earlier_record(tmp_path):
    db = tmp_path / "tasks.db"
    plan = wire.plan(wire.step(1, "fetch_private", {"resource": "sales", "token": SECRET}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                 "reflector": wire.reflection(answer="42 rows")}[r.role])
    task_id, result, live = run_stored(db, llm, f"Count the rows of the private sales table; the token is {SECRET}.",
                                       tools=[fetch_private], config=RuntimeConfig(store_path=db))
    assert result.status == "accepted" and SEEN == [SECRET]  # the tool still got the real value
    data = raw_bytes(db)  # the database, its -wal and -shm files
    assert SECRET.encode() not in data and REDACTED.encode() in data
    assert SECRET not in json.dumps(live)  # what handle.events() serves
    store = Store(db)
    assert store.get_task(task_id).task.endswith(f"the token is {REDACTED}.")
    assert SECRET not in json.dumps(store.llm_calls(task_id))
    store.close()
    assert SECRET not in render_html(load_trace(task_id, db))


def test_scrub_rewrites_only_the_task_it_names(tmp_path):
    db = tmp_path / "t.db"
    with Store(db) as store:
        for task_id in ("a", "b"):
            store.create_task(task_id, f"token {SECRET}", {})
            store.record_llm_call(task_id, {"role": "router", "messages": [{"role": "user", "content": SECRET}]})
    report = scrub_task(db, "a", [SECRET])
    assert report.rows == 2 and report.wal_truncated
    with Store(db) as store:
        assert store.get_task("a").task == f"token {REDACTED}" and store.get_task("b").task == f"token {SECRET}"
        assert SECRET not in json.dumps(store.llm_calls("a")) and SECRET in json.dumps(store.llm_calls("b"))
