"""The web view's HTTP side over a real store: the task list, a task's event stream, outputs, answering."""

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

PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "delete_record", {"record_id": "r-$step_1_result"}, deps=[1, 2]))


def _llm() -> FunctionLLM:
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": PLAN,
                                  "reflector": wire.reflection(answer="deleted")}[r.role])


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _post(url: str, body: object, content_type: str = "application/json") -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _sse(url: str, until: bytes, timeout: float = 10) -> list[tuple[str, dict]]:
    """The server-sent events of ``url`` until one whose data contains ``until``."""
    out, buf = [], b""
    deadline = time.monotonic() + timeout
    with urllib.request.urlopen(url, timeout=timeout) as r:
        while time.monotonic() < deadline:
            buf += r.read1(1 << 16)
            while b"\n\n" in buf:
                block, buf = buf.split(b"\n\n", 1)
                lines = dict(line.split(b": ", 1) for line in block.split(b"\n"))
                out.append((lines[b"event"].decode(), json.loads(lines[b"data"])))
                if until in lines[b"data"]:
                    return out
    raise AssertionError(f"no event with {until!r} within {timeout}s: {out}")


@pytest.fixture
def escalated(tmp_path):
    """A task waiting for confirmation of its write step, and the web view answering through the core."""
    core = BackgroundCore(tmp_path / "t.db", _llm())
    task_id = core.submit("delete the record named after Paris's population, after looking up Rome too")
    assert core.result(task_id).status == "escalated"
    with UIServer(Store(tmp_path / "t.db"), responder=core.respond_async) as ui:
        yield core, ui, task_id
    core.close()


def test_the_list_shows_status_wall_calls_and_tokens_as_the_store_has_them(escalated):
    core, ui, task_id = escalated
    status, body = _get(ui.url + "/api/tasks")
    [row] = json.loads(body)
    result = Store(core.config.store_path).get_result(task_id)
    assert status == 200 and row["task_id"] == task_id and row["status"] == "escalated"
    assert row["llm_calls"] == result.usage.total.llm_calls == 2  # router + planner; no review before approval
    assert (row["input_tokens"], row["output_tokens"]) == (result.usage.total.input_tokens,
                                                           result.usage.total.output_tokens)
    assert row["wall_s"] == pytest.approx(result.timings.wall_s)
    listed = _sse(ui.url + "/api/tasks/stream", until=task_id.encode())
    assert listed[0] == ("tasks", [row])


def test_pages_are_served_and_an_unknown_task_is_a_404(escalated):
    _, ui, task_id = escalated
    status, page = _get(ui.url + f"/tasks/{task_id}")
    assert status == 200 and b'<svg id="dag"' in page and b"/static/task.js" in page
    assert _get(ui.url + "/")[0] == 200 and b'id="tasks"' in _get(ui.url + "/")[1]
    assert _get(ui.url + "/tasks/nope")[0] == 404
    assert _get(ui.url + "/static/task.js")[0] == 200


def test_the_stream_replays_the_log_then_follows_the_answer_with_who_gave_it(escalated):
    core, ui, task_id = escalated
    stored = Store(core.config.store_path).events(task_id)
    first = _sse(ui.url + f"/api/tasks/{task_id}/stream", until=b'"task_finished"')
    assert first[0][0] == "task" and first[0][1]["responder"] is True
    assert [d["seq"] for k, d in first if k == "event"] == [e.seq for e in stored]
    assert {d["role"] for k, d in first if k == "llm"} == {"router", "planner"}
    assert all("messages" not in d and "reply_text" not in d for k, d in first if k == "llm")

    assert _post(ui.url + f"/api/tasks/{task_id}/respond", {"text": "approve", "by": "alice"}) == (200, {"ok": True})
    assert core.result(task_id, run=2).status == "accepted"
    later = _sse(ui.url + f"/api/tasks/{task_id}/stream?after={stored[-1].seq}", until=b'"accepted"')
    events = [d for k, d in later if k == "event"]
    answer = events[0]
    assert answer["type"] == "escalated" and answer["payload"]["answer"] == "approve"
    assert answer["payload"]["answered_by"] == "alice" and answer["payload"]["step_id"] == 3
    assert [e["type"] for e in events[1:3]] == ["step_started", "step_finished"]


def test_answers_are_checked_before_they_reach_the_task(escalated):
    _, ui, task_id = escalated
    url = ui.url + f"/api/tasks/{task_id}/respond"
    assert _post(url, {"text": "approve"}, content_type="text/plain")[0] == 415  # no cross-site form posts
    assert _post(url, {"text": "  "})[0] == 400
    status, body = _post(url, {"text": {"a": 1}})
    assert status == 400 and "must be text" in body["error"]
    assert _post(url, {"text": "approve", "by": ["x"]})[0] == 400
    assert _post(ui.url + "/api/tasks/nope/respond", {"text": "approve"})[0] == 409


def test_an_answer_to_a_task_that_is_not_waiting_is_refused(escalated):
    core, ui, task_id = escalated
    url = ui.url + f"/api/tasks/{task_id}/respond"
    assert _post(url, {"text": "approve"})[0] == 200
    core.result(task_id, run=2)
    status, body = _post(url, {"text": "approve"})
    assert status == 409 and "not waiting for a human" in body["error"]


def test_a_read_only_page_says_how_to_answer_instead(escalated):
    core, _, task_id = escalated
    with UIServer(Store(core.config.store_path)) as ui:
        status, body = _post(ui.url + f"/api/tasks/{task_id}/respond", {"text": "approve"})
    assert status == 403 and "tetrarch respond" in body["error"]


def test_a_step_output_is_served_as_stored(escalated):
    core, ui, task_id = escalated
    status, body = _get(ui.url + f"/api/tasks/{task_id}/outputs/1/2")
    assert status == 200 and json.loads(body) == {"output": 2.8}
    assert _get(ui.url + f"/api/tasks/{task_id}/outputs/1/9")[0] == 404


def test_bad_requests_are_told_what_to_send(escalated):
    _, ui, task_id = escalated
    assert _get(ui.url + f"/api/tasks/{task_id}/stream?after=x")[0] == 400
    req = urllib.request.Request(ui.url + f"/api/tasks/{task_id}/respond", data=b"not json",
                                 headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 400 and '"text"' in json.loads(err.value.read())["error"]


def test_a_reconnecting_browser_resumes_after_the_last_event_it_saw(escalated):
    core, ui, task_id = escalated
    stored = Store(core.config.store_path).events(task_id)
    req = urllib.request.Request(ui.url + f"/api/tasks/{task_id}/stream", headers={"Last-Event-ID": str(stored[-3].seq)})
    out, buf = [], b""
    with urllib.request.urlopen(req, timeout=10) as r:
        while b'"task_finished"' not in buf:
            buf += r.read1(1 << 16)
    for block in buf.split(b"\n\n"):
        if b"event: event" in block:
            out.append(json.loads(block.split(b"data: ", 1)[1])["seq"])
    assert out == [e.seq for e in stored[-2:]]
    assert f"id: {stored[-1].seq}".encode() in buf


def test_a_responder_failure_is_reported_to_the_page(tmp_path):
    async def broken(task_id: str, text: str, by: str) -> None:
        raise RuntimeError("the model server is not installed")

    with Store(tmp_path / "t.db") as store:
        store.create_task("t1", "x", {})
    with UIServer(Store(tmp_path / "t.db"), responder=broken) as ui:
        status, body = _post(ui.url + "/api/tasks/t1/respond", {"text": "approve"})
    assert status == 500 and body["error"] == "RuntimeError: the model server is not installed"
