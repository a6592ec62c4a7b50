"""Attacks on the live web view and on `tetrarch mcp serve --http`, replayed against real servers on loopback
addresses (uvicorn on port 0, in a thread; no Ray, no browser): every one is refused.

The browser half (the reflected XSS opened in headless Chromium, with an escalation waiting) is
tests/integration/test_ui_attacks_browser.py. docs/reliability.md lists these attacks under "Attacks tried and
refused".
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import threading
import time
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agents.cli import mcp_serve
from agents.store import Store
from agents.ui import UIServer

TOKEN = "attack-test-token-0123456789"
XSS = "/tasks/%3Csvg%20onload%3Dalert(document.domain)%3E"
EVIL = {"Host": "evil.example", "Origin": "http://evil.example"}
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


class Answers:
    """A responder that records every answer it is asked to give: an attack that reaches it has won."""

    def __init__(self) -> None:
        self.given: list[tuple[str, str, str]] = []

    async def __call__(self, task_id: str, text: str, by: str) -> None:
        self.given.append((task_id, text, by))


def _request(host: str, port: int, path: str, *, method: str = "GET", headers: dict[str, str] | None = None,
             body: bytes | None = None, read: bool = True) -> tuple[int, dict[str, str], bytes]:
    """One raw request: the path and the headers go on the wire exactly as given (urllib would rewrite them)."""
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read() if read else b""
    finally:
        conn.close()


@pytest.fixture
def store(tmp_path) -> Store:
    with Store(tmp_path / "t.db") as s:
        s.create_task("t1", "<img src=x onerror=alert(1)> a task", {})
    return Store(tmp_path / "t.db")


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def view(store, answers) -> Iterator[UIServer]:
    with UIServer(store, responder=answers) as ui:
        yield ui


# -- 1. reflected XSS on the unknown-task page --------------------------------------------------------------

def test_a_script_in_a_task_link_is_never_written_into_the_page(view):
    status, headers, body = _request(view.host, view.port, XSS)
    assert status == 404 and headers["content-type"].startswith("text/html")
    assert b"<svg" not in body and b"onload" not in body and b"alert" not in body
    # The page is the same static file whatever the id: nothing of the request is in it.
    assert _request(view.host, view.port, "/tasks/another-id")[2] == body


# -- 4. security headers on every response ------------------------------------------------------------------

def _responses(ui: UIServer) -> dict[str, tuple[int, dict[str, str]]]:
    h, p = ui.host, ui.port
    out = {}
    for name, path, kwargs in [
        ("list page", "/", {}), ("task page", "/tasks/t1", {}), ("unknown task page", XSS, {}),
        ("json", "/api/tasks", {}), ("missing output", "/api/tasks/t1/outputs/1/1", {}),
        ("static script", "/static/task.js", {}), ("no such file", "/static/nope.js", {}),
        ("no such route", "/nope", {}), ("wrong method", "/api/tasks", {"method": "DELETE"}),
        ("bad answer", "/api/tasks/t1/respond", {"method": "POST", "body": b"{}",
                                                 "headers": {"content-type": "text/plain"}}),
        ("refused host", "/", {"headers": {"Host": "evil.example"}}),
        ("event stream", "/api/tasks/t1/stream", {"read": False}),
    ]:
        status, headers, _ = _request(h, p, path, **kwargs)
        out[name] = (status, headers)
    return out


def _assert_secured(name: str, headers: dict[str, str]) -> None:
    for key, value in SECURITY_HEADERS.items():
        assert headers.get(key) == value, f"{name}: {key} is {headers.get(key)!r}"
    csp = headers.get("content-security-policy", "")
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives.get("script-src") == ["'self'"], f"{name}: {csp!r}"
    assert directives.get("frame-ancestors") == ["'none'"], f"{name}: {csp!r}"
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, f"{name}: {csp!r}"


def test_every_response_of_the_view_carries_the_security_headers(view):
    responses = _responses(view)
    assert {name: status for name, (status, _) in responses.items()} == {
        "list page": 200, "task page": 200, "unknown task page": 404, "json": 200, "missing output": 404,
        "static script": 200, "no such file": 404, "no such route": 404, "wrong method": 405, "bad answer": 415,
        "refused host": 421, "event stream": 200}
    for name, (_, headers) in responses.items():
        _assert_secured(name, headers)


def test_the_token_pages_carry_them_too(store):
    with UIServer(store, token=TOKEN) as ui:
        refused = _request(ui.host, ui.port, "/")
        redirect = _request(ui.host, ui.port, f"/?token={TOKEN}", headers={"Accept": "text/html"})
    assert (refused[0], redirect[0]) == (401, 303)
    _assert_secured("401", refused[1])
    _assert_secured("303", redirect[1])


def test_no_page_needs_inline_script_or_style(view):
    for path in ("/", "/tasks/t1", XSS):
        page = _request(view.host, view.port, path)[2].decode()
        assert "<script>" not in page and "style=" not in page and "<style" not in page
        assert not re.search(r"\son\w+\s*=", page), page  # no inline event handler attributes


# -- 2. DNS rebinding on every loopback spelling -------------------------------------------------------------

LOOPBACK_BINDS = ["127.0.0.1", "127.0.0.2", "localhost", "Localhost", "::1"]


@pytest.mark.parametrize("bind", LOOPBACK_BINDS)
def test_the_view_refuses_a_rebound_host_and_a_foreign_origin_on_every_loopback_address(store, answers, bind):
    with UIServer(store, host=bind, responder=answers) as ui:
        own = urlsplit(ui.url)
        assert _request(own.hostname, ui.port, "/api/tasks", headers={"Host": own.netloc})[0] == 200
        assert _request(own.hostname, ui.port, "/api/tasks", headers={"Host": "evil.example"})[0] == 421
        assert _request(own.hostname, ui.port, "/api/tasks", headers=EVIL)[0] == 421
        status, _, _ = _request(own.hostname, ui.port, "/api/tasks/t1/respond", method="POST",
                                body=b'{"text": "approve"}',
                                headers={"Host": own.netloc, "Origin": "http://evil.example",
                                         "content-type": "application/json"})
        assert status == 403
    assert answers.given == []


@pytest.mark.parametrize("bind", ["127.0.0.2", "Localhost", "::1"])
def test_the_view_answers_its_own_printed_url(store, bind):
    with UIServer(store, host=bind) as ui:
        own = urlsplit(ui.url)
        status, _, body = _request(own.hostname, ui.port, "/api/tasks", headers={"Host": own.netloc})
    assert status == 200 and json.loads(body)[0]["task_id"] == "t1"


def _serve_mcp(bind: str, token: str | None = None) -> tuple[uvicorn.Server, threading.Thread]:
    def no_orchestrator():
        raise AssertionError("no tool may run in these tests")

    app = mcp_serve.http_app(mcp_serve.build_server(no_orchestrator), bind, token)
    server = uvicorn.Server(uvicorn.Config(app, host=bind, port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the MCP server did not start"
        time.sleep(0.02)
    return server, thread


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "attacker", "version": "1"}}}).encode()
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("bind", ["127.0.0.2", "Localhost", "127.0.0.1", "::1"])
def test_mcp_over_http_refuses_a_rebinding_page_on_every_loopback_address(bind):
    server, thread = _serve_mcp(bind)
    try:
        port = server.servers[0].sockets[0].getsockname()[1]
        addr = server.servers[0].sockets[0].getsockname()[0]
        status, _, body = _request(addr, port, "/mcp", method="POST", body=INITIALIZE,
                                   headers={**MCP_HEADERS, **EVIL})
        assert status == 421 and b"result" not in body, (status, body)
        status, _, body = _request(addr, port, "/mcp", method="POST", body=INITIALIZE,
                                   headers={**MCP_HEADERS, "Origin": "http://evil.example"})
        assert status == 403 and b"result" not in body, (status, body)
        # A client that names the address it connects to is served.
        name = f"[{bind}]" if ":" in bind else bind.lower()
        url = f"http://{name}:{port}/mcp"
        assert asyncio.run(_tools(url)) == ["cancel_task", "respond", "run_task", "task_status"]
    finally:
        server.should_exit = True
        thread.join(10)


async def _tools(url: str) -> list[str]:
    http = httpx2.AsyncClient()
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        return sorted(t.name for t in (await client.list_tools()).tools)


# -- 3. open redirect in the ?token= exchange ----------------------------------------------------------------

@pytest.mark.parametrize("path", ["//evil.example/x", "///evil.example/x", "/\\evil.example/x", "/\\/evil.example",
                                  "/%2F%2Fevil.example/x", "/%5Cevil.example/x", "//evil.example"])
def test_the_token_exchange_redirects_only_to_a_path_of_this_server(store, path):
    with UIServer(store, token=TOKEN) as ui:
        status, headers, _ = _request(ui.host, ui.port, f"{path}?token={TOKEN}", headers={"Accept": "text/html"})
        base = f"{ui.url}/"
    location = headers["location"]
    assert status == 303 and location.startswith("/") and location[1:2] not in ("/", "\\"), location
    assert urlsplit(urljoin(base, location)).netloc == urlsplit(base).netloc, location
    assert "token" not in location


# -- 10. the login cookie next to a cookie that is not RFC-clean ---------------------------------------------

@pytest.mark.parametrize("others", ['prefs={"theme": "dark"}', 'a=b c; x="unterminated', "=novalue", "flag"])
def test_the_login_cookie_is_found_beside_any_other_cookie(store, others):
    with UIServer(store, token=TOKEN) as ui:
        cookies = f"{others}; tetrarch_token={TOKEN}"
        assert _request(ui.host, ui.port, "/api/tasks", headers={"Cookie": cookies})[0] == 200
        assert _request(ui.host, ui.port, "/api/tasks", headers={"Cookie": f"tetrarch_token={TOKEN}; {others}"})[0] == 200
        assert _request(ui.host, ui.port, "/api/tasks", headers={"Cookie": others})[0] == 401


# -- 12. a stream position beyond any seq -----------------------------------------------------------------------

@pytest.mark.parametrize(("query", "headers"), [("?after=" + "9" * 30, {}), ("?after=9223372036854775808", {}),
                                                ("", {"Last-Event-ID": "1" + "0" * 40})])
def test_a_huge_stream_position_is_refused_with_a_message(view, query, headers):
    status, _, body = _request(view.host, view.port, f"/api/tasks/t1/stream{query}", headers=headers)
    assert status == 400 and "whole number" in json.loads(body)["error"]


def test_the_largest_seq_is_still_a_position(view):
    status, headers, _ = _request(view.host, view.port, "/api/tasks/t1/stream?after=9223372036854775807", read=False)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
