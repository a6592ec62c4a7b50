"""`tetrarch mcp serve --http`: off loopback a bearer token is required, and the server refuses to start
without one; with a token, MCP clients must send it."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import urllib.error
import urllib.request

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agents.cli import mcp_serve
from agents.ui.auth import MissingTokenError

TOKEN = "mcp-test-token-0123456789"


def _no_orchestrator():
    raise AssertionError("the Orchestrator must not be built")


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "[::]:8765", "192.168.7.7:8765", ":8765x"])
def test_a_public_address_without_a_token_refuses_before_anything_starts(address, capsys, monkeypatch):
    monkeypatch.delenv("TETRARCH_TOKEN", raising=False)
    monkeypatch.setattr(mcp_serve, "_build_llm", lambda *a: _no_orchestrator())
    if address.endswith("x"):
        with pytest.raises(SystemExit, match="use HOST:PORT"):
            mcp_serve.main(["serve", "--http", address])
        return
    assert mcp_serve.main(["serve", "--http", address]) == 2
    err = capsys.readouterr().err
    assert "refusing to listen" in err and "--token" in err


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "127.0.0.1:8765"])
def test_a_short_token_is_refused_as_too_short(address, capsys, monkeypatch):
    monkeypatch.setattr(mcp_serve, "_build_llm", lambda *a: _no_orchestrator())
    assert mcp_serve.main(["serve", "--http", address, "--token", "abc"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("tetrarch mcp: the token is too short (3 characters)") and "at least 16 characters" in line


def _listening() -> tuple[socket.socket, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock, sock.getsockname()[1]


def test_an_address_that_cannot_be_served_is_named_before_the_orchestrator_starts(capsys, monkeypatch):
    monkeypatch.delenv("TETRARCH_TOKEN", raising=False)
    monkeypatch.setattr(mcp_serve, "_build_llm", lambda *a: _no_orchestrator())
    assert mcp_serve.main(["serve", "--http", "127.0.0.1:99999"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == "tetrarch mcp: port 99999 is out of range: use a port from 0 to 65535 (0: any free port)"
    sock, port = _listening()
    with sock:
        assert mcp_serve.main(["serve", "--http", f"127.0.0.1:{port}"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tetrarch mcp: port {port} on 127.0.0.1 is in use")


def test_loopback_needs_no_token():
    mcp_serve.http_app(mcp_serve.build_server(_no_orchestrator), "127.0.0.1", None)
    with pytest.raises(MissingTokenError):
        mcp_serve.http_app(mcp_serve.build_server(_no_orchestrator), "0.0.0.0", None)


@pytest.fixture
def served():
    """The MCP app behind its token, on 127.0.0.1 (what `--http 0.0.0.0:PORT --token T` serves, kept local)."""
    app = mcp_serve.http_app(mcp_serve.build_server(_no_orchestrator), "127.0.0.1", TOKEN)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)


def test_requests_without_the_token_get_401(served):
    req = urllib.request.Request(served, data=b"{}", headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 401 and "Bearer" in err.value.headers["www-authenticate"]


def test_an_mcp_client_with_the_token_lists_the_tools(served):
    async def tools(token: str) -> list[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(served, http_client=http)) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    assert asyncio.run(tools(TOKEN)) == ["cancel_task", "respond", "run_task", "task_status"]
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own error types
        asyncio.run(tools("wrong-token-wrong-token"))
