"""Start the test MCP server (tests/support/mcp_server.py) over stdio or streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents.tools import MCPServerHTTP, MCPServerStdio

__all__ = ["SERVER_SCRIPT", "HTTPServerProcess", "free_port", "http_server", "log_lines", "stdio_server"]

SERVER_SCRIPT = str(Path(__file__).with_name("mcp_server.py"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stdio_server(log: Path | None = None, tools_file: Path | None = None, **options: Any) -> MCPServerStdio:
    """The test server over stdio; with ``tools_file``, tools added at run time persist for new processes."""
    env = {"MCP_TEST_LOG": str(log)} if log else {}
    if tools_file:
        env["MCP_TEST_TOOLS_FILE"] = str(tools_file)
    return MCPServerStdio(sys.executable, [SERVER_SCRIPT, "--stdio"], env=env or None, name="test-stdio", **options)


def log_lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


class HTTPServerProcess:
    """The test server as a subprocess on a free port; with ``restart=True`` a watcher thread starts it again
    whenever it exits (the ``crash`` tools kill it), like a supervised service would."""

    def __init__(self, log: Path | None = None, restart: bool = False) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._env = {**os.environ, **({"MCP_TEST_LOG": str(log)} if log else {})}
        self._restart = restart
        self._stopping = threading.Event()
        self.starts = 0
        self._proc = self._spawn()
        self._watcher = threading.Thread(target=self._watch, daemon=True) if restart else None
        if self._watcher:
            self._watcher.start()
        self.wait_ready()

    def _spawn(self) -> subprocess.Popen[bytes]:
        self.starts += 1
        return subprocess.Popen([sys.executable, SERVER_SCRIPT, "--http", str(self.port)], env=self._env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _watch(self) -> None:
        while not self._stopping.is_set():
            self._proc.wait()
            if not self._stopping.is_set():
                self._proc = self._spawn()

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return
            time.sleep(0.05)
        raise TimeoutError(f"the test MCP server did not listen on {self.port} within {timeout}s")

    def config(self, **options: Any) -> MCPServerHTTP:
        return MCPServerHTTP(self.url, name="test-http", **options)

    def stop(self) -> None:
        self._stopping.set()
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        if self._watcher:
            self._watcher.join(10)


@contextlib.contextmanager
def http_server(log: Path | None = None, restart: bool = False) -> Iterator[HTTPServerProcess]:
    server = HTTPServerProcess(log, restart)
    try:
        yield server
    finally:
        server.stop()
