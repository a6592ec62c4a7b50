"""Who may reach a local HTTP server: loopback binds need nothing, any other bind needs a bearer token.

Shared by ``tetrarch ui`` and ``tetrarch mcp serve --http``. ``BearerAuth`` is a plain ASGI middleware: a
request passes with ``Authorization: Bearer <token>``, or (for a browser, whose ``EventSource`` cannot set
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
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote

__all__ = ["COOKIE", "MIN_TOKEN_LEN", "BearerAuth", "MissingTokenError", "is_loopback", "new_token",
           "require_token"]

COOKIE = "tetrarch_token"
MIN_TOKEN_LEN = 16
"""Shorter tokens are refused: a guessable token on a reachable port is no protection."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class MissingTokenError(ValueError):
    """A server was asked to listen beyond this machine without a token (or with a short one)."""

    def __str__(self) -> str:
        host = self.args[0] if self.args else "?"
        return (f"refusing to listen on {host}: any address but 127.0.0.1 / ::1 / localhost lets others on the "
                f"network in, so it needs a bearer token of at least {MIN_TOKEN_LEN} characters; pass --token "
                "(or set TETRARCH_TOKEN), e.g. --token \"$(python -c 'import secrets; print(secrets.token_urlsafe())')\"")


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def require_token(host: str, token: str | None) -> str | None:
    """The token a server on ``host`` must demand (None on loopback without one); raises
    ``MissingTokenError`` when ``host`` is reachable from elsewhere and no usable token was given."""
    if token is not None and len(token) < MIN_TOKEN_LEN:
        raise MissingTokenError(host)
    if token is None and not is_loopback(host):
        raise MissingTokenError(host)
    return token


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
        cookie = SimpleCookie()
        cookie.load(_header(scope, b"cookie"))
        if COOKIE in cookie:
            return cookie[COOKIE].value, False
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


async def _redirect_without_token(scope: Scope, send: Send, cookie: bytes) -> None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    query.pop("token", None)
    rest = "&".join(f"{quote(k)}={quote(v)}" for k, values in query.items() for v in values)
    location = quote(scope.get("root_path", "") + scope["path"]) + (f"?{rest}" if rest else "")
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
