"""The web view's cancel (issue 62, item 3): ``POST /api/tasks/<id>/cancel`` stops a running task as "the live
view", under the same rules as answering (a JSON body, which no other site can send without a preflight this
server never grants; the Host/Origin guard; the token). Idempotent; an unknown task is a 404; a page without a
canceller says how to cancel instead."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from support import wire
from support.background import BackgroundCore

from agents.llm import FunctionLLM
from agents.store import Store
from agents.ui import UIServer

PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                 wire.step(2, "sleepy", {"seconds": 60, "label": "late"}, deps=[1]))


def _post(url: str, body: object, content_type: str = "application/json") -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _first_sse(url: str) -> tuple[str, dict]:
    """The first server-sent event of ``url`` (a task stream's is the task itself)."""
    with urllib.request.urlopen(url, timeout=10) as r:
        buf = b""
        while b"\n\n" not in buf:
            buf += r.read1(1 << 16)
    lines = dict(line.split(b": ", 1) for line in buf.split(b"\n\n", 1)[0].split(b"\n"))
    return lines[b"event"].decode(), json.loads(lines[b"data"])


def _wait_for_step_2(store_path, task_id: str) -> None:
    with Store(store_path) as store:
        for _ in range(1000):
            if any(e.type == "step_started" and e.payload.step_id == 2 for e in store.events(task_id)):
                return
            time.sleep(0.01)
    raise AssertionError("step 2 never started")


@pytest.fixture
def running(tmp_path):
    """A task whose second step sleeps a minute, and the web view cancelling through the core."""
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": PLAN,
                                 "reflector": wire.reflection(answer="late")}[r.role])
    core = BackgroundCore(tmp_path / "t.db", llm)
    task_id = core.submit("look up Paris, then wait for the late feed")
    _wait_for_step_2(tmp_path / "t.db", task_id)
    with UIServer(Store(tmp_path / "t.db"), responder=core.respond_async, canceller=core.cancel_async) as ui:
        yield core, ui, task_id
    core.close()


def test_the_cancel_button_stops_the_task_as_the_live_view(running):
    core, ui, task_id = running
    kind, head = _first_sse(ui.url + f"/api/tasks/{task_id}/stream")
    assert kind == "task" and head["canceller"] is True
    status, body = _post(ui.url + f"/api/tasks/{task_id}/cancel", {})
    assert status == 200 and body["ok"] and body["cancelled"] and body["status"] == "cancelled"
    assert "cancelled by the live view" in body["message"]
    result = core.result(task_id)
    assert (result.status, result.cancelled_by) == ("cancelled", "the live view")
    assert [s.status for s in result.steps] == ["completed", "cancelled"]
    status, body = _post(ui.url + f"/api/tasks/{task_id}/cancel", {})
    assert status == 200 and not body["cancelled"] and "already cancelled" in body["message"]


def test_a_cancel_is_checked_like_an_answer(running):
    core, ui, task_id = running
    assert _post(ui.url + "/api/tasks/nope/cancel", {})[0] == 404
    status, body = _post(ui.url + f"/api/tasks/{task_id}/cancel", {}, content_type="text/plain")
    assert status == 415 and "application/json" in body["error"]
    with UIServer(Store(core.config.store_path)) as read_only:
        status, body = _post(read_only.url + f"/api/tasks/{task_id}/cancel", {})
        assert status == 403 and "tetrarch cancel" in body["error"]
    with Store(core.config.store_path) as store:
        assert store.get_task(task_id).status == "running"  # none of these stopped it
