"""The one loopback rule of ``tetrarch ui`` and ``tetrarch mcp serve --http``: which addresses a server may listen
on without a token, and which ``Host`` and ``Origin`` headers it then answers.

A loopback address (127.0.0.0/8, ::1, localhost, in any case) is reachable from this machine only, so it needs no
token. A web page can still reach it through the user's browser: by rebinding its own DNS name to 127.0.0.1 (the
browser then sends ``Host: evil.example``) or by posting from its own origin (``Origin: http://evil.example``).
So without a token a server answers only requests that name a loopback host — 127.0.0.1, localhost, [::1] or the
address it listens on — and come from no origin or a loopback one; anything else is refused (421 for the host,
403 for the origin) before it reaches the app. With a token every request must carry the token, so names do not
matter. Any other address needs a token (``require_token``).

The accepted headers are written as the MCP SDK's ``TransportSecuritySettings`` patterns (a value, or ``base:*``
for any port) and ``HostRule`` matches them the SDK's way, so ``HostGuard`` in front of both servers and the SDK's
own check inside the MCP server enforce the same rule (tests/unit/ui/test_loopback.py holds them to it).

Example:
    >>> rule = host_rule("127.0.0.2", None)
    >>> rule.host_ok("127.0.0.2:8765"), rule.host_ok("evil.example"), rule.origin_ok("http://evil.example")
    (True, False, False)
    >>> host_rule("0.0.0.0", "a-long-enough-token-1234").names is None   # the token guards it
    True
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from agents.errors import ConfigError

__all__ = ["LOOPBACK_NAMES", "MIN_TOKEN_LEN", "HostGuard", "HostRule", "MissingTokenError", "ShortTokenError",
           "TokenError", "host_rule", "is_loopback", "require_token", "url_host"]

MIN_TOKEN_LEN = 16
"""Shorter tokens are refused: a guessable token on a reachable port is no protection."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The names a client on this machine may use for a loopback server, whichever loopback address it listens on."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenError(ConfigError, ValueError):
    """The token a server was given does not protect it: none where one is needed, or a short one."""


class MissingTokenError(TokenError):
    """A server was asked to listen beyond this machine without a token."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"refusing to listen on {host or '(every address)'}: an address other machines can reach needs a bearer "
            f"token (only loopback addresses, 127.x.x.x, ::1 and localhost, are closed to the network); pass one of at "
            f"least {MIN_TOKEN_LEN} characters with --token (or set TETRARCH_TOKEN), e.g. "
            "--token \"$(python -c 'import secrets; print(secrets.token_urlsafe())')\"")
        self.host = host


class ShortTokenError(TokenError):
    """The token given is too short to be a secret."""

    def __init__(self, length: int) -> None:
        super().__init__(
            f"the token is too short ({length} characters): use one of at least {MIN_TOKEN_LEN} characters, e.g. "
            "--token \"$(python -c 'import secrets; print(secrets.token_urlsafe())')\"")
        self.length = length


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost; any case, brackets or not)."""
    name = host.strip().removeprefix("[").removesuffix("]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def url_host(host: str) -> str:
    """``host`` as a URL (and so a client's ``Host`` header) writes it: lower case, an IP address in its short
    form, IPv6 in brackets (``Localhost`` → ``localhost``, ``0:0::1`` → ``[::1]``)."""
    name = host.strip().removeprefix("[").removesuffix("]").lower()
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return name
    return f"[{ip.compressed}]" if ip.version == 6 else ip.compressed


def require_token(host: str, token: str | None) -> str | None:
    """The token a server on ``host`` must demand (None on loopback without one). Raises ``ShortTokenError`` for a
    token shorter than ``MIN_TOKEN_LEN`` and ``MissingTokenError`` for a non-loopback ``host`` without one."""
    if token is not None and len(token) < MIN_TOKEN_LEN:
        raise ShortTokenError(len(token))
    if token is None and not is_loopback(host):
        raise MissingTokenError(host)
    return token


def _matches(value: str, patterns: list[str]) -> bool:
    # The MCP SDK's matching (mcp.server.transport_security): the exact value, or "base:*" for base and any port.
    return value in patterns or any(p.endswith(":*") and value.startswith(p[:-1]) for p in patterns)


@dataclass(frozen=True, slots=True)
class HostRule:
    """Which ``Host`` and ``Origin`` headers a server answers."""

    names: tuple[str, ...] | None
    """The host names requests may name (as ``url_host`` writes them); None: any, because a token guards the
    server."""

    def allowed_hosts(self) -> list[str]:
        """``Host`` header patterns: each name bare (port 80) or with any port."""
        return [p for name in self.names or () for p in (name, f"{name}:*")]

    def allowed_origins(self) -> list[str]:
        """``Origin`` header patterns: a page served from one of the names, over http or https, any port."""
        return [p for name in self.names or () for scheme in ("http", "https")
                for p in (f"{scheme}://{name}", f"{scheme}://{name}:*")]

    def host_ok(self, host: str | None) -> bool:
        return self.names is None or (bool(host) and _matches(host or "", self.allowed_hosts()))

    def origin_ok(self, origin: str | None) -> bool:
        """A request from no origin (not a browser, or a same-origin GET) passes; a page's origin must match."""
        return self.names is None or not origin or _matches(origin, self.allowed_origins())

    def refusal(self, host: str | None, origin: str | None) -> tuple[int, str] | None:
        """(status, why) for a request this rule refuses; None for one it lets through."""
        if not self.host_ok(host):
            return 421, (f"421: this server answers requests to {', '.join(self.names or ())} only, not to "
                         f"{host or '(no Host header)'}: open it by one of those names\n")
        if not self.origin_ok(origin):
            return 403, f"403: requests from pages of {origin} are refused: this server answers its own pages only\n"
        return None


def host_rule(bind: str, token: str | None) -> HostRule:
    """The rule of a server listening on ``bind`` with ``token``; raises like ``require_token``."""
    if require_token(bind, token) is not None:
        return HostRule(None)
    return HostRule(tuple(dict.fromkeys((*LOOPBACK_NAMES, url_host(bind)))))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class HostGuard:
    """ASGI middleware enforcing a ``HostRule`` on every request before the app sees it."""

    def __init__(self, app: ASGIApp, rule: HostRule) -> None:
        self.app, self.rule = app, rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = None
        if scope["type"] in ("http", "websocket"):
            refused = self.rule.refusal(_header(scope, b"host"), _header(scope, b"origin"))
        if refused is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refused[1][:120]})
        else:
            status, text = refused
            body = text.encode()
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"x-content-type-options", b"nosniff"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
