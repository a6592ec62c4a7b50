"""What the web view sends a browser: its pages, which are static files, and the headers every response carries.

No HTML is ever built from request or store data: ``static_page`` takes only the name of a file shipped in
``static/`` and serves it as it is; the page's scripts fetch the data as JSON and show it with ``textContent``.
So nothing a link or a task contains can become markup (tests/unit/ui/test_pages.py checks that no module of
``agents.ui`` builds an HTML response any other way).

``SecurityHeaders`` puts the same headers on every response, pages, JSON, streams, files and refusals alike: a
Content-Security-Policy that runs scripts from this server's files only (no inline script or style, no eval) and
lets no other site frame the page, plus nosniff, no referrer, and no framing for older browsers.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from importlib import resources
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from agents.ui.loopback import ASGIApp, Receive, Scope, Send

__all__ = ["SECURITY_HEADERS", "STATIC", "SecurityHeaders", "server_error", "static_page"]

STATIC = resources.files("agents.ui") / "static"
Page = Literal["index.html", "task.html", "missing.html"]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
_RAW = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]


def static_page(name: Page, status_code: int = 200) -> HTMLResponse:
    """The page ``static/<name>`` as shipped, never cached (a new version of tetrarch may change it)."""
    return HTMLResponse((STATIC / name).read_text(encoding="utf-8"), status_code=status_code,
                        headers={"cache-control": "no-store"})


async def server_error(request: Request, exc: Exception) -> Response:
    """The 500 answer: Starlette sends it from outside every middleware, so it carries the headers itself."""
    return PlainTextResponse("500: internal error in the web view; the server's log has the details\n",
                             status_code=500, headers=SECURITY_HEADERS)


class SecurityHeaders:
    """ASGI middleware adding ``SECURITY_HEADERS`` to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {key.lower() for key, _ in message.get("headers", ())}
                extra = [(k, v) for k, v in _RAW if k not in present]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, secured)
