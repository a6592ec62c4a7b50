"""LlamaServer lifecycle against a fake server process; backend check; command line; start_local_llm errors."""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from agents.llm.local import server as server_mod
from agents.llm.local._launch import _settings_env_names
from agents.llm.local.errors import LlamaServerError, LocalBackendUnavailable, ModelNotInstalledError
from agents.llm.local.server import (
    BACKEND_MODULES,
    PROMPT_CACHE_BYTES,
    LlamaServer,
    ServerState,
    check_backend,
    free_port,
    server_command,
    start_local_llm,
)

FAKE_SERVER = Path(__file__).with_name("llm_local_fake_server.py")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie is dead, just not reaped by a non-init PID 1


def _wait_dead(pid: int, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fake interpreter that runs the fake server instead of llama.cpp, plus a dummy model file."""
    python = tmp_path / "fake-python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_SERVER} "$@"\n')
    python.chmod(0o755)
    monkeypatch.setattr(server_mod, "check_backend", lambda: None)
    monkeypatch.setenv("FAKE_LLAMA_ARGV", str(tmp_path / "argv.json"))
    monkeypatch.setenv("FAKE_LLAMA_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("FAKE_LLAMA_CHILD", str(tmp_path / "child.pid"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")

    def make(mode: str = "ok", **kw) -> LlamaServer:
        monkeypatch.setenv("FAKE_LLAMA_MODE", mode)
        kw.setdefault("startup_timeout_s", 20)
        kw.setdefault("log_path", tmp_path / "server.log")
        return LlamaServer(model, python=str(python), **kw)

    make.tmp = tmp_path  # type: ignore[attr-defined]
    return make


def test_server_command_is_the_documented_llama_cpp_command():
    cmd = server_command(Path("/m/q.gguf"), port=8123, n_threads=2, n_ctx=4096, alias="local",
                         prompt_cache_bytes=0)
    assert cmd[0] == sys.executable and cmd[1].endswith("agents/llm/local/_launch.py")
    flags = dict(zip(cmd[2::2], cmd[3::2], strict=True))
    assert flags == {"--model": "/m/q.gguf", "--host": "127.0.0.1", "--port": "8123", "--n_threads": "2",
                     "--n_ctx": "4096", "--model_alias": "local", "--interrupt_requests": "False",
                     "--logits_all": "False"}
    cached = server_command(Path("/m/q.gguf"), port=8123)  # the prompt cache is on by default
    assert cached[-6:] == ["--cache", "True", "--cache_type", "ram", "--cache_size", str(PROMPT_CACHE_BYTES)]


def test_free_port_is_bindable_on_loopback():
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_missing_backend_names_the_fix():
    with pytest.raises(LocalBackendUnavailable) as err:
        check_backend(find_spec=lambda name: None if name in ("llama_cpp", "uvicorn") else object())
    message = str(err.value)
    assert err.value.missing == ("llama_cpp", "uvicorn")
    assert "make demo" in message and "pip install -e '.[local]'" in message and "CMAKE_ARGS" in message


def test_backend_present_passes():
    check_backend(find_spec=lambda name: object())
    assert "llama_cpp" in BACKEND_MODULES


def test_start_checks_the_backend_before_spawning(tmp_path, monkeypatch):
    def missing() -> None:
        raise LocalBackendUnavailable(["llama_cpp"])

    monkeypatch.setattr(server_mod, "check_backend", missing)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    server = LlamaServer(model)
    with pytest.raises(LocalBackendUnavailable):
        server.start()
    assert server.pid is None and server.state is ServerState.NEW


def test_missing_model_file_is_reported(fake, tmp_path):
    server = fake()
    server.model_path = tmp_path / "absent.gguf"
    with pytest.raises(FileNotFoundError, match="tetrarch models pull"):
        server.start()


def test_start_waits_until_ready_then_stop_kills_it(fake):
    server = fake(n_ctx=1024, alias="local")
    with server:
        assert server.state is ServerState.RUNNING
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        with urllib.request.urlopen(server.base_url + "/models", timeout=5) as resp:
            assert json.load(resp)["data"][0]["id"] == "local"
        argv = json.loads((fake.tmp / "argv.json").read_text())
        assert argv[argv.index("--port") + 1] == str(server.port)
        assert argv[argv.index("--n_ctx") + 1] == "1024"
        pid = server.pid
    assert server.state is ServerState.STOPPED
    assert pid is not None and _wait_dead(pid)


def test_explicit_port_is_used(fake):
    port = free_port()
    with fake(port=port) as server:
        assert server.port == port


def test_stop_is_idempotent_and_start_after_running_is_a_noop(fake):
    server = fake()
    server.start()
    pid = server.pid
    assert server.start() is server and server.pid == pid
    server.stop()
    server.stop()
    assert _wait_dead(pid)


def test_a_server_that_died_can_be_started_again(fake):
    server = fake()
    server.start()
    first = server.pid
    os.kill(first, signal.SIGKILL)
    assert _wait_dead(first) and server.state is ServerState.STOPPED
    server.start()
    try:
        assert server.state is ServerState.RUNNING and server.pid != first
    finally:
        server.stop()


def test_crash_during_startup_quotes_the_last_log_lines(fake):
    server = fake("crash")
    with pytest.raises(LlamaServerError) as err:
        server.start()
    assert "exited with code 3" in str(err.value)
    assert err.value.log_tail[-1] == "log line 29" and len(err.value.log_tail) == 20
    assert "log line 9" not in err.value.log_tail
    assert err.value.log_path == str(fake.tmp / "server.log")
    assert server.state is ServerState.STOPPED


def test_startup_timeout_stops_the_process(fake):
    server = fake("silent", startup_timeout_s=0.5)
    with pytest.raises(LlamaServerError, match=r"no answer from .* within 0.5s"):
        server.start()
    assert server.pid is not None and _wait_dead(server.pid)


def test_auto_port_taken_during_startup_is_retried_once(fake):
    with fake("busy-once") as server:
        assert server.state is ServerState.RUNNING
    assert (fake.tmp / "state").read_text() == "2"


def test_stop_kills_the_whole_process_group(fake):
    server = fake("child")
    server.start()
    child = int((fake.tmp / "child.pid").read_text())
    assert _alive(child)
    server.stop()
    assert _wait_dead(child), "a process the server started outlived stop()"


def test_an_abandoned_server_is_stopped_when_collected(fake):
    server = fake()
    server.start()
    pid = server.pid
    del server
    gc.collect()
    assert pid is not None and _wait_dead(pid)


def test_launcher_scrubs_same_named_settings_from_the_environment():
    names = _settings_env_names(["n_ctx", "api_key", "model"])
    assert {"n_ctx", "api_key", "model", "host", "port", "config_file"} <= names


def test_start_local_llm_without_the_model_says_how_to_pull(tmp_path):
    with pytest.raises(ModelNotInstalledError) as err:
        start_local_llm("smollm2-135m", cache_dir=tmp_path)
    assert str(err.value).endswith("run: tetrarch models pull smollm2-135m")
