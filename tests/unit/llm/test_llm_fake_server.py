"""FakeOpenAIServer on the wire (plain urllib, no SDK): routes, SSE framing, the fault queue, process mode."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from agents.llm.fake_server import (
    MALFORMED_BODY,
    WRONG_SHAPE_JSON,
    FakeOpenAIServer,
    Fault,
    format_kind,
    word_usage,
)

USER = [{"role": "user", "content": "one two three"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def post(server: FakeOpenAIServer, body: dict) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(server.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def sse_events(raw: bytes) -> list[str]:
    return [block.removeprefix("data: ") for block in raw.decode().split("\n\n") if block]


def test_models_and_a_plain_completion(server):
    with urllib.request.urlopen(server.base_url + "/models", timeout=5) as resp:
        assert json.load(resp)["data"][0]["id"] == "fake-model"
    status, _, raw = post(server, {"model": "m", "messages": USER})
    body = json.loads(raw)
    assert status == 200 and body["choices"][0]["message"]["content"] == "one two three"
    assert body["usage"] == word_usage({"messages": USER}, "one two three") == {
        "prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}
    assert server.requests == [{"model": "m", "messages": USER}]


def test_sse_framing_with_and_without_the_usage_chunk(server):
    _, headers, raw = post(server, {"model": "m", "messages": USER, "stream": True,
                                    "stream_options": {"include_usage": True}})
    events = sse_events(raw)
    assert headers["Content-Type"] == "text/event-stream" and events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "one two three"
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3
    _, _, plain = post(server, {"model": "m", "messages": USER, "stream": True})
    assert all("usage" not in json.loads(e) for e in sse_events(plain)[:-1])


def test_faults_apply_in_order_only_to_marked_requests(server):
    server.inject(Fault.server_error(502, marker="ROLE:planner"), Fault.rate_limit(0.25))
    router = [{"role": "system", "content": "ROLE:router"}, *USER]
    planner = [{"role": "system", "content": "ROLE:planner"}, *USER]
    status, headers, _ = post(server, {"messages": router})
    assert status == 429 and headers["Retry-After"] == "0.25", "the first fault targets planners only"
    assert post(server, {"messages": router})[0] == 200
    assert post(server, {"messages": planner})[0] == 502
    assert post(server, {"messages": planner})[0] == 200 and server.pending_faults == []


def test_times_none_lasts_forever_and_clear_faults_removes_it(server):
    server.inject(Fault.server_error(500, times=None))
    assert [post(server, {"messages": USER})[0] for _ in range(3)] == [500, 500, 500]
    server.clear_faults()
    assert post(server, {"messages": USER})[0] == 200


def test_format_rejection_and_stream_fault_only_hit_matching_requests(server):
    server.inject(Fault.reject_response_format("json_object"), Fault.truncated_stream(1))
    assert post(server, {"messages": USER, "response_format": {"type": "json_schema"}})[0] == 200
    status, _, raw = post(server, {"messages": USER, "response_format": {"type": "json_object"}})
    assert status == 500 and b"response_format" in raw
    _, _, raw = post(server, {"messages": USER, "stream": True})
    events = sse_events(raw)
    assert len(events) == 1 and "[DONE]" not in events and "finish_reason\": null" in events[0]


def test_body_faults(server):
    server.inject(Fault.malformed_body(), Fault.wrong_shape_json(), Fault.no_usage())
    status, _, raw = post(server, {"messages": USER})
    assert status == 200 and raw == MALFORMED_BODY
    wrong = json.loads(post(server, {"messages": USER})[2])
    assert wrong["choices"][0]["message"]["content"] == WRONG_SHAPE_JSON
    assert "usage" not in json.loads(post(server, {"messages": USER})[2])


def test_a_hang_is_cut_short_by_stop():
    server = FakeOpenAIServer().start()
    server.inject(Fault.hang(30))
    url = server.base_url
    started = time.monotonic()
    with pytest.raises(OSError):  # the client's own timeout
        urllib.request.urlopen(urllib.request.Request(url + "/chat/completions", data=b"{}"), timeout=0.3)
    server.stop()
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("body,kind", [
    ({}, None), ({"response_format": {"type": "text"}}, None),
    ({"response_format": {"type": "json_schema", "json_schema": {}}}, "json_schema"),
    ({"response_format": {"type": "json_object", "schema": {}}}, "json_object_schema"),
    ({"response_format": {"type": "json_object"}}, "json_object"),
])
def test_format_kind(body, kind):
    assert format_kind(body) == kind


def test_invalid_fault_counts_and_stopped_server_misuse_are_reported():
    with pytest.raises(ValueError, match="times"):
        Fault.server_error(times=0)
    with pytest.raises(RuntimeError, match="start"):
        _ = FakeOpenAIServer().base_url


def test_runs_as_a_process_and_prints_its_url():
    proc = subprocess.Popen([sys.executable, "-m", "agents.llm.fake_server", "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        with urllib.request.urlopen(url + "/models", timeout=5) as resp:
            assert resp.status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
