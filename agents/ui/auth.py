"""Who may reach a local HTTP server: loopback binds need nothing, any other bind needs a bearer token.

Shared by ``tetrarch ui`` and ``tetrarch mcp serve --http``; the loopback rule itself (which binds need a token,
which Host and Origin headers are answered) is ``agents.ui.loopback``. ``BearerAuth`` is a plain ASGI middleware:
a request passes with ``Authorization: Bearer <token>``, or (for a browser, whose ``EventSource`` cannot set
headers) with the ``tetrarch_token`` cookie the page sets after a first visit with ``?token=<token>``.
Tokens are compared in constant time.

Example:
    >>> require_token("127.0.0.1", None) is None
    True
    >>> require_token("0.0.0.0", "a-long-enough-token-1234")
    'a-long-enough-token-1234'
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.requests import cookie_parser

from agents.ui.loopback import (
    MIN_TOKEN_LEN,
    ASGIApp,
    MissingTokenError,
    Receive,
    Scope,
    Send,
    ShortTokenError,
    TokenError,
    is_loopback,
    require_token,
)

__all__ = ["COOKIE", "MIN_TOKEN_LEN", "BearerAuth", "MissingTokenError", "ShortTokenError", "TokenError",
           "is_loopback", "new_token", "require_token", "same_origin_path"]

COOKIE = "tetrarch_token"


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


class BearerAuth:
    """Refuses (401) every request without the token; lets a browser trade ``?token=`` for a cookie."""

    def __init__(self, app: ASGIApp, token: str, *, realm: str = "tetrarch") -> None:
        self._app, self._token, self._realm = app, token, realm

    def _presented(self, scope: Scope) -> tuple[str, bool]:
        """(the token the request carries, whether it came in the query string)."""
        auth = _header(scope, b"authorization")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip(), False
        # Parsed as browsers send cookies, not by RFC: another site's cookie on this host that is not RFC-clean
        # (``prefs={"theme": "dark"}``) makes http.cookies drop every cookie after it, ours included.
        cookies = cookie_parser(_header(scope, b"cookie"))
        if COOKIE in cookies:
            return cookies[COOKIE], False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        return (query.get("token") or [""])[0], True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        presented, from_query = self._presented(scope)
        if not hmac.compare_digest(presented.encode(), self._token.encode()):
            await _deny(send, self._realm)
            return
        if not from_query:
            await self._app(scope, receive, send)
            return
        cookie = f"{COOKIE}={self._token}; HttpOnly; SameSite=Strict; Path=/".encode()
        if scope["type"] == "http" and scope.get("method") == "GET" and "text/html" in _header(scope, b"accept"):
            # A browser: keep the token out of its address bar and history; the cookie carries it from now on.
            await _redirect_without_token(scope, send, cookie)
            return

        async def with_cookie(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        await self._app(scope, receive, with_cookie)


def same_origin_path(path: str) -> str:
    """``path`` as a ``Location`` that stays on this server: one leading slash, percent-encoded. A request for
    ``//evil.example/x`` must not be redirected to ``//evil.example/x``, which a browser reads as another host
    (as it reads ``/\\evil.example``: backslashes are encoded, so they stay part of the path)."""
    return "/" + quote(path, safe="/").lstrip("/")


async def _redirect_without_token(scope: Scope, send: Send, cookie: bytes) -> None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    query.pop("token", None)
    rest = "&".join(f"{quote(k)}={quote(v)}" for k, values in query.items() for v in values)
    location = same_origin_path(scope.get("root_path", "") + scope["path"]) + (f"?{rest}" if rest else "")
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode()), (b"set-cookie", cookie), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def _deny(send: Send, realm: str) -> None:
    body = b"401: this server needs its token (Authorization: Bearer <token>, or open the page once with ?token=...)\n"
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"www-authenticate", f'Bearer realm="{realm}"'.encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
