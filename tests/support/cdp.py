"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``: headless Chromium driven with
the standard library only (no driver binary, no websocket, nothing downloaded), for the web view's tests."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

def require_chromium() -> str:
    """The Chromium binary, looked up when a browser test runs, not when its module is collected: the fast tier
    collects the browser modules too (and deselects them), while CI installs Chromium beside it. Missing in CI is
    an error (the browser tests must run there); elsewhere the test is skipped with what to run."""
    found = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
    if found is None:
        if os.environ.get("CI"):
            raise RuntimeError("chromium is missing in CI: `make test-all` installs it with scripts/install_chromium.sh")
        pytest.skip("chromium is not installed: run `sudo bash scripts/install_chromium.sh`")
    return found

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--remote-debugging-pipe",
          "--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-sync",
          "--disable-component-update", "--disable-default-apps", "--disable-extensions", "--metrics-recording-only",
          "--disable-features=Translate,OptimizationHints,MediaRouter", "--hide-scrollbars", "about:blank"]


class CDPError(RuntimeError):
    pass


class Browser:
    """Headless Chromium; ``page(url)`` opens a tab to drive."""

    def __init__(self, binary: str | None = None) -> None:
        binary = binary or require_chromium()
        if binary is None:
            raise CDPError("chromium is not installed")
        self._profile = tempfile.mkdtemp(prefix="tetrarch-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # the browser reads commands on fd 3 and writes replies on fd 4
            reads, writes = os.dup(to_child_r), os.dup(from_child_w)  # above 4: dup2 below clobbers neither
            os.dup2(reads, 3)
            os.dup2(writes, 4)

        # pass_fds keeps 3 and 4 open: the child closes every other descriptor after preexec_fn.
        self._proc = subprocess.Popen([binary, f"--user-data-dir={self._profile}", *_FLAGS], preexec_fn=fds,
                                      pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next, self._pending, self._lock = 0, {}, threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        with os.fdopen(self._from_child, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    msg = json.loads(raw)
                    future = self._pending.pop(msg.get("id"), None) if "id" in msg else None
                    if future is not None:
                        future.set_result(msg)
        for future in list(self._pending.values()):
            future.set_exception(CDPError("chromium exited"))

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._next += 1
            msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            self._pending[self._next] = future
            os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        reply = future.result(timeout)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def page(self, url: str, width: int = 1280, height: int = 900) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.send("Page.enable")
        page.send("Page.navigate", {"url": url})
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(10)
        os.close(self._to_child)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self._browser, self._session = browser, session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._browser.send(method, params, self._session)

    def eval(self, expression: str) -> Any:
        got = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in got:
            raise CDPError(f"{expression}: {got['exceptionDetails'].get('text')} "
                           f"{got['exceptionDetails'].get('exception', {}).get('description', '')}")
        return got["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30, interval: float = 0.02) -> Any:
        deadline = time.monotonic() + timeout
        error: Exception | None = None
        while True:
            try:
                value = self.eval(expression)
            except CDPError as exc:  # the page (or the element) is not there yet
                value, error = None, exc
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"not true within {timeout}s: {expression} (last error: {error})")
            time.sleep(interval)

    def click(self, selector: str) -> None:
        """A real mouse click (pressed + released) at the middle of the element."""
        box = self.eval(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                        " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1})

    def type(self, selector: str, text: str) -> None:
        self.eval(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.write_bytes(base64.b64decode(data))
