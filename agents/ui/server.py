"""Running the web view: uvicorn on a background thread (``UIServer``), for the CLI, notebooks and tests.

Example:
    >>> import tempfile, pathlib, urllib.request
    >>> from agents.store import Store
    >>> store = Store(pathlib.Path(tempfile.mkdtemp()) / "t.db")
    >>> with UIServer(store) as ui:
    ...     urllib.request.urlopen(ui.url + "/api/tasks").read()
    b'[]'
"""

from __future__ import annotations

import threading
import time
from typing import Self

import uvicorn

from agents.ui.app import Canceller, Responder, create_app
from agents.ui.listen import check_listen
from agents.ui.loopback import url_host
from agents.config.prices import PriceTable
from agents.ui.reader import ReadableStore

__all__ = ["UIServer"]


class UIServer:
    """The web view served on ``host:port`` until ``stop()`` (``port=0``: a free port, see ``url``).

    Any host but loopback needs ``token`` (raises ``agents.ui.loopback.TokenError`` otherwise); ``start`` raises
    ``agents.ui.listen.ListenError`` when ``host:port`` cannot be listened on."""

    def __init__(self, store: ReadableStore, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 responder: Responder | None = None, poll_s: float = 0.1, prices: PriceTable | None = None,
                 canceller: Canceller | None = None) -> None:
        app = create_app(store, responder=responder, token=token, host=host, poll_s=poll_s, prices=prices,
                         canceller=canceller)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                                timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._closing = app.state.closing
        self._thread: threading.Thread | None = None
        self.host, self._port = host, port

    def start(self, timeout_s: float = 20.0) -> Self:
        check_listen(self.host, self._port)
        self._thread = threading.Thread(target=self._server.run, name="tetrarch-ui", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the web view did not start on {self.host}; is the port free?")
            time.sleep(0.02)
        return self

    @property
    def port(self) -> int:
        sockets = [s for server in self._server.servers for s in server.sockets]
        return int(sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        """The address to open, written as a browser writes it (the Host header it sends is one the page answers)."""
        return f"http://{url_host(self.host)}:{self.port}"

    def wait(self, until: threading.Event | None = None) -> None:
        """Block until the server stops, or until ``until`` is set (the CLI sets it from its signal handler)."""
        assert self._thread is not None
        until = until or threading.Event()
        # Waiting on the event, never inside Thread.join: Python 3.11 marks a thread stopped when a
        # KeyboardInterrupt lands in its join(), so the later join in stop() would not wait for uvicorn.
        while self._thread.is_alive() and not until.wait(0.5):
            pass

    def stop(self) -> None:
        self._closing.set()
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
