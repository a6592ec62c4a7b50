"""No HTML is built from data anywhere in the web view: every HTML response is a static page served as shipped,
and every response carries the security headers, refusals and crashes included."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from agents.ui.pages import SECURITY_HEADERS, STATIC, SecurityHeaders, server_error

UI = Path(__file__).resolve().parents[3] / "agents" / "ui"


def _calls(tree: ast.AST) -> list[tuple[ast.Call, str, str | None]]:
    """Every call with its callee's name and the function it is made in."""
    out = []

    def visit(node: ast.AST, within: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else within
            if isinstance(child, ast.Call):
                func = child.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                out.append((child, name, within))
            visit(child, inner)

    visit(tree, None)
    return out


@pytest.mark.parametrize("path", sorted(UI.glob("*.py")), ids=lambda p: p.name)
def test_html_is_only_ever_a_static_page(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for call, name, within in _calls(tree):
        where = f"{path.name}:{call.lineno}"
        if name == "HTMLResponse":
            assert (path.name, within) == ("pages.py", "static_page"), f"{where}: HTML built outside static_page"
        if name.endswith("Response"):
            for kw in call.keywords:
                if kw.arg == "media_type":
                    assert "html" not in ast.unparse(kw.value), f"{where}: an HTML media type"
        if name == "static_page":
            first = call.args[0] if call.args else None
            assert isinstance(first, ast.Constant) and (STATIC / first.value).is_file(), \
                f"{where}: static_page takes the name of a shipped page, nothing computed"
    for node in ast.walk(tree):  # a raw ASGI answer sending HTML would bypass all of the above
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            assert b"html" not in node.value, f"{path.name}:{node.lineno}: raw HTML content type"


def test_a_crash_answers_with_the_headers_too():
    async def boom(request):
        raise RuntimeError("boom")

    app = Starlette(routes=[Route("/", boom)], middleware=[Middleware(SecurityHeaders)],
                    exception_handlers={500: server_error})
    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "raw_path": b"/", "query_string": b"", "headers": [],
             "root_path": "", "scheme": "http", "server": ("127.0.0.1", 1), "http_version": "1.1"}
    with pytest.raises(RuntimeError):  # Starlette re-raises for the server's log after answering
        asyncio.run(app(scope, receive, send))
    start = sent[0]
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    assert start["status"] == 500 and b"boom" not in sent[1]["body"]
    assert {k: headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS
