"""A managed llama.cpp OpenAI-compatible server on 127.0.0.1, and ``start_local_llm`` on top of it.

``LlamaServer`` spawns ``llama_cpp.server`` (through ``_launch.py``) in its own process group, waits
until ``GET /v1/models`` answers, and terminates the whole group on ``stop()``, on garbage collection
and at interpreter exit. Its output goes to a log file whose last lines are quoted in every startup
error.

Example:
    >>> cmd = server_command(Path("m.gguf"), port=8123, n_ctx=4096, python="python")
    >>> cmd[cmd.index("--port") + 1], cmd[cmd.index("--model_alias") + 1]
    ('8123', 'local')
"""

from __future__ import annotations

import enum
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Self

from agents.llm.local._launch import PARENT_PID_ENV, STATE_DIR_ENV
from agents.llm.local.errors import LlamaServerError, LocalBackendUnavailable
from agents.llm.local.priority import keep_caller_priority

__all__ = [
    "BACKEND_MODULES",
    "LOG_TAIL_LINES",
    "LlamaServer",
    "ServerState",
    "check_backend",
    "free_port",
    "prefill_state_dir",
    "server_command",
    "start_local_llm",
]

BACKEND_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
"""What ``llama-cpp-python[server]`` provides; checked without importing (importing loads llama.cpp)."""

LOG_TAIL_LINES = 20
_LAUNCHER = Path(__file__).with_name("_launch.py")
_POLL_INTERVAL_S = 0.25


class ServerState(enum.Enum):
    NEW = "new"
    RUNNING = "running"
    STOPPED = "stopped"


def check_backend(find_spec: Callable[[str], Any] = importlib.util.find_spec) -> None:
    """Raise ``LocalBackendUnavailable`` (naming the fix) unless llama-cpp-python[server] is importable."""
    missing = [name for name in BACKEND_MODULES if find_spec(name) is None]
    if missing:
        raise LocalBackendUnavailable(missing)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the kernel's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


PROMPT_CACHE_BYTES = 512 << 20
"""The server's prompt cache (``--cache``): model states kept in RAM, the one sharing the longest prefix with a new
prompt loaded before it is read. Without it llama.cpp reuses only the *previous* prompt's prefix, and the roles take
turns, so each call re-read its role's instructions. A state costs ~28 KB per token with the 1.5B model (24-38 MB
for the demo's prompts), so 512 MiB keeps ~15 of them. Conversation steps go first, least recently used first; the
roles' static prefixes prefilled at start-up (``agents.llm.local.warm``) stay (``_prompt_cache.py``). The cap holds because the launcher keeps
states without their logits copy (``_launch.py``); before that the server grew ~0.32 GB a call, 12.4 GB after 26.
``prompt_cache_bytes=0`` turns it off."""


def server_command(model_path: Path, *, port: int, host: str = "127.0.0.1", n_threads: int = 2,
                   n_ctx: int = 4096, alias: str = "local", python: str | None = None,
                   prompt_cache_bytes: int = PROMPT_CACHE_BYTES) -> list[str]:
    """The argv that runs llama.cpp's OpenAI-compatible server for ``model_path``
    (``prompt_cache_bytes=0``: no prompt cache beyond the last request's)."""
    cache = ["--cache", "True", "--cache_type", "ram", "--cache_size", str(prompt_cache_bytes)] \
        if prompt_cache_bytes > 0 else []
    return [
        python or sys.executable, str(_LAUNCHER),
        "--model", str(model_path),
        "--host", host,
        "--port", str(port),
        "--n_threads", str(n_threads),
        "--n_ctx", str(n_ctx),
        "--model_alias", alias,
        # llama-cpp-python's server cancels the in-flight request when a new one arrives (default True).
        # Our roles call concurrently (an executor's repair round while the planner still streams), so
        # requests must queue instead: otherwise the planner's stream is cut mid-plan.
        "--interrupt_requests", "False",
        # Logits for every prompt token are only for logprobs, which we never ask for: without them prefill is
        # ~20% faster (35 against 29 tokens/s, 1.5B model, 2 cores), and the prompt cache stays small.
        "--logits_all", "False",
        *cache,
    ]


def _terminate_group(proc: subprocess.Popen[bytes], log: IO[bytes], grace_s: float) -> None:
    """SIGTERM the server's process group, SIGKILL it after ``grace_s``. Safe to call twice."""
    try:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass
        # The leader may be gone while others in its group live on (e.g. a leftover child).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    finally:
        log.close()


def _read_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64_000))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.strip()][-lines:]


def _answers(url: str, timeout_s: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


class LlamaServer:
    """llama.cpp's OpenAI-compatible server for one GGUF file, owned by this process.

    Example:
        >>> with LlamaServer(model_path("smollm2-135m")) as server:      # doctest: +SKIP
        ...     print(server.base_url)
        http://127.0.0.1:40123/v1
    """

    def __init__(self, model_path: Path | str, *, host: str = "127.0.0.1", port: int | None = None,
                 n_threads: int = 2, n_ctx: int = 4096, alias: str = "local", startup_timeout_s: float = 120.0,
                 log_path: Path | str | None = None, stop_grace_s: float = 5.0, python: str | None = None,
                 prompt_cache_bytes: int = PROMPT_CACHE_BYTES, state_dir: Path | str | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.model_path = Path(model_path)
        self.host = host
        self.alias = alias
        self.n_threads = n_threads
        self.n_ctx = n_ctx
        self.startup_timeout_s = startup_timeout_s
        self.stop_grace_s = stop_grace_s
        self.python = python
        self.prompt_cache_bytes = prompt_cache_bytes
        self.state_dir = Path(state_dir) if state_dir is not None else None
        """Where the prompt cache keeps prefilled prefixes across starts (``_state_shelf.py``); None: nowhere."""
        self._requested_port = port
        self._port: int | None = port
        self._log_path = Path(log_path) if log_path is not None else None
        self._clock = clock
        self._sleep = sleep
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self._state = ServerState.NEW

    # ------------------------------------------------------------------ properties
    @property
    def state(self) -> ServerState:
        if self._state is ServerState.RUNNING and self._proc is not None and self._proc.poll() is not None:
            return ServerState.STOPPED
        return self._state

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server has no port until start() is called")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    def command(self, port: int | None = None) -> list[str]:
        return server_command(self.model_path, port=port or self.port, host=self.host, n_threads=self.n_threads,
                              n_ctx=self.n_ctx, alias=self.alias, python=self.python,
                              prompt_cache_bytes=self.prompt_cache_bytes)

    # ------------------------------------------------------------------ lifecycle
    def spawn(self) -> Self:
        """Start the server process on a port chosen now (``base_url`` is known at once) without waiting for it to
        answer: the caller starts other work while the model loads, then calls ``wait_ready``."""
        if self.state is ServerState.RUNNING:
            return self
        self.stop()
        check_backend()
        if not self.model_path.is_file():
            raise FileNotFoundError(f"model file {self.model_path} does not exist; install it with "
                                    "`tetrarch models pull NAME` (see `tetrarch models list`)")
        self._spawn(self._requested_port or free_port(self.host))
        return self

    def wait_ready(self) -> None:
        """Block until a server started with ``spawn`` answers (``LlamaServerError`` with its last log lines if it
        exits or does not answer within ``startup_timeout_s``)."""
        self._wait_ready()

    def start(self) -> Self:
        """Spawn the server and block until it answers; returns ``self``. No-op when already running.

        Raises:
            LocalBackendUnavailable: llama-cpp-python[server] is not installed (the message says how).
            FileNotFoundError: ``model_path`` does not exist.
            LlamaServerError: it exited or did not answer within ``startup_timeout_s`` (with its last log lines).
        """
        if self.state is ServerState.RUNNING:
            return self
        self.stop()  # reap a previous run that crashed after startup (no-op otherwise)
        check_backend()
        if not self.model_path.is_file():
            raise FileNotFoundError(f"model file {self.model_path} does not exist; install it with "
                                    "`tetrarch models pull NAME` (see `tetrarch models list`)")
        # An auto-chosen port can be taken by someone else while the model loads; one fresh try fixes that.
        attempts = 1 if self._requested_port else 2
        for attempt in range(1, attempts + 1):
            try:
                self._start_once(self._requested_port or free_port(self.host))
                return self
            except LlamaServerError as exc:
                if attempt == attempts or not any("address already in use" in ln.lower() for ln in exc.log_tail):
                    raise
        raise AssertionError("unreachable")

    def _start_once(self, port: int) -> None:
        self._spawn(port)
        self._wait_ready()

    def _spawn(self, port: int) -> None:
        self._port = port
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="tetrarch-llama-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        log = self._log_path.open("ab")
        env = {**os.environ, PARENT_PID_ENV: str(os.getpid())}
        if self.state_dir is not None and self.prompt_cache_bytes > 0:
            env[STATE_DIR_ENV] = str(self.state_dir)
        self._proc = subprocess.Popen(self.command(port), stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, env=env, start_new_session=True)
        keep_caller_priority(self._proc.pid)  # its own session must not make it a group of higher priority
        # The finalizer holds no reference to self, so an abandoned server is still stopped on GC / exit.
        self._finalizer = weakref.finalize(self, _terminate_group, self._proc, log, self.stop_grace_s)
        self._state = ServerState.RUNNING

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = self._clock() + self.startup_timeout_s
        probe = f"{self.base_url}/models"
        while True:
            code = self._proc.poll()
            if code is not None:
                self._fail(f"the server process exited with code {code} during startup")
            if _answers(probe):
                return
            if self._clock() >= deadline:
                self._fail(f"no answer from {probe} within {self.startup_timeout_s:g}s")
            self._sleep(_POLL_INTERVAL_S)

    def _fail(self, reason: str) -> None:
        self.stop()
        path = self._log_path or Path("?")
        raise LlamaServerError(reason, _read_tail(path), str(path))

    def stop(self) -> None:
        """Terminate the server's process group (SIGKILL after ``stop_grace_s``). Idempotent."""
        if self._finalizer is not None:
            self._finalizer()
        if self._state is not ServerState.NEW:
            self._state = ServerState.STOPPED

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f" at {self.base_url}" if self._port is not None else ""
        return f"LlamaServer({self.model_path.name!r}, {self.state.value}{where})"



def prefill_state_dir(name: str, sha256: str, n_ctx: int, cache_dir: Path | str | None = None) -> Path:
    """Where the server keeps prefilled prompt prefixes of one model file (``_state_shelf.py``):
    ``<cache>/prefill/<name>-<sha256 prefix>-ctx<n_ctx>``; delete it to start cold."""
    from agents.llm.local.provision import cache_root

    return cache_root(cache_dir) / "prefill" / f"{name}-{sha256[:16]}-ctx{n_ctx}"


def start_local_llm(name: str | None = None, *, cache_dir: Path | str | None = None, timeout_s: float = 600.0,
                    max_retries: int = 1, wait: bool = True, **server_kw: Any) -> tuple[Any, LlamaServer]:
    """Start the embedded model server for an installed model and return ``(OpenAIChat, LlamaServer)``.

    Nothing is downloaded here: a model that was never pulled raises ``ModelNotInstalledError``
    naming the command to run. The client asks for ``{"type": "json_object", "schema": ...}``, the
    structured-output form llama.cpp's server accepts (it rejects the standard ``json_schema``).
    ``timeout_s`` is generous because two CPU cores prefill ≈ 45 tokens/s on the default model.
    ``wait=False`` returns as soon as the process is started (``server.wait_ready()`` before the first call).

    Example:
        >>> llm, server = start_local_llm("qwen2.5-coder-0.5b")     # doctest: +SKIP
        >>> server.stop()                                          # doctest: +SKIP

    Raises:
        ModelNotInstalledError, UnknownModelError, LocalBackendUnavailable, LlamaServerError.
    """
    from agents.llm.local.catalog import get_model
    from agents.llm.local.provision import model_path

    model = get_model(name)
    path = model_path(model.name, cache_dir)
    server_kw.setdefault("n_ctx", model.n_ctx)
    # Prefilled prompt prefixes are kept per model file and context size (the server adds the llama.cpp build).
    server_kw.setdefault("state_dir", prefill_state_dir(model.name, model.sha256, server_kw["n_ctx"], cache_dir))
    server = LlamaServer(path, **server_kw)
    if wait:
        server.start()
    else:
        server.spawn()
    try:
        from agents.llm.openai_chat import OpenAIChat
        from agents.llm.profile import SMALL_LOCAL

        llm = OpenAIChat(model=server.alias, base_url=server.base_url, api_key="local", timeout_s=timeout_s,
                         max_retries=max_retries, structured_output="json_object_schema",
                         profile=SMALL_LOCAL)
    except BaseException:
        server.stop()
        raise
    return llm, server
