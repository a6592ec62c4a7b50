"""The Python sandbox: hostile programs end with a clear result and leave the host untouched.

Each attack is tried twice where it matters: with every layer, and with the audit hook off, to show the
OS-level layers (rlimits, unprivileged uid, network namespace) hold on their own.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from agents.tools import ToolArgumentError
from agents.tools.builtins.python_sandbox import SandboxLimits, run_python, run_sandboxed

LIMITS = SandboxLimits(cpu_seconds=2, wall_seconds=5, memory_bytes=256 * 2**20, file_bytes=2**20,
                       open_files=32, processes=16, output_bytes=4096)
AS_ROOT = os.geteuid() == 0
both_layers = pytest.mark.parametrize("audit_hook", [True, False], ids=["all-layers", "os-layers-only"])


def run(code: str, **kwargs: object):  # type: ignore[no-untyped-def]
    return run_sandboxed(code, LIMITS, **kwargs)  # type: ignore[arg-type]


def test_normal_code_returns_its_output_and_can_use_its_own_folder() -> None:
    result = run("import json, math\nopen('x.txt', 'w').write('kept')\nprint(json.dumps(math.sqrt(16)), "
                 "open('x.txt').read())")
    assert (result.exit_code, result.stdout, result.stderr, result.timed_out) == (0, "4.0 kept\n", "", False)
    assert {"rlimits", "wall-timeout", "audit-hook", "fresh-workdir"} <= set(result.isolation)


def test_exceptions_come_back_as_a_traceback_not_a_tool_error() -> None:
    result = run("raise ValueError('bad input')")
    assert result.exit_code == 1 and "ValueError: bad input" in result.stderr


def test_an_infinite_loop_is_stopped_by_the_cpu_limit() -> None:
    result = run("while True: pass")
    assert result.signal in ("SIGXCPU", "SIGKILL") and result.exit_code != 0


def test_sleeping_forever_is_stopped_by_the_wall_clock() -> None:
    result = run_sandboxed("import time\ntime.sleep(60)", SandboxLimits(wall_seconds=1))
    assert result.timed_out and result.signal == "SIGKILL"


@both_layers
def test_a_memory_bomb_gets_memory_error(audit_hook: bool) -> None:
    result = run("x = bytearray(1 << 30)", audit_hook=audit_hook)
    assert result.exit_code == 1 and "MemoryError" in result.stderr


@both_layers
def test_a_fork_bomb_cannot_multiply(audit_hook: bool) -> None:
    if not audit_hook and not AS_ROOT:
        pytest.skip("without root there is no unprivileged uid for RLIMIT_NPROC to bind")
    code = "import os\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            import time; time.sleep(30)\n" \
           "        n += 1\nexcept OSError as e:\n    print('stopped after', n, type(e).__name__)\n    raise SystemExit(3)"
    result = run(code, audit_hook=audit_hook)
    assert result.exit_code == 3 and "stopped after" in result.stdout
    if audit_hook:
        assert result.stdout == "stopped after 0 PermissionError\n"  # the hook refused the very first fork
    else:
        assert int(result.stdout.split()[2]) < LIMITS.processes


@both_layers
def test_no_network_even_to_localhost(audit_hook: bool) -> None:
    if not audit_hook and "netns" not in run("pass").isolation:
        pytest.skip("no network namespace here (not root or no unshare)")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    waiter = threading.Thread(target=accept)
    waiter.start()
    result = run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)", audit_hook=audit_hook)
    waiter.join()
    server.close()
    assert result.exit_code == 1 and not accepted
    assert ("PermissionError" if audit_hook else "OSError") in result.stderr or "unreachable" in result.stderr


@both_layers
def test_secrets_outside_are_unreadable(audit_hook: bool) -> None:
    if not audit_hook and not AS_ROOT:
        pytest.skip("without root the child keeps the caller's file permissions")
    result = run("import os\nprint(os.listdir('/root'))", audit_hook=audit_hook)
    assert result.exit_code == 1 and "PermissionError" in result.stderr
    if audit_hook:
        result = run("print(open('/etc/passwd').read())")
        assert result.exit_code == 1 and "reading '/etc/passwd' is not allowed" in result.stderr


@both_layers
def test_writing_outside_the_working_directory_fails(audit_hook: bool, tmp_path: Path) -> None:
    if not audit_hook and not AS_ROOT:
        pytest.skip("without root the child keeps the caller's file permissions")
    target = tmp_path / "planted.txt"
    result = run(f"open({str(target)!r}, 'w').write('x')", audit_hook=audit_hook)
    assert result.exit_code == 1 and "PermissionError" in result.stderr
    assert not target.exists()


@pytest.mark.parametrize(("code", "event"), [
    ("import os\nos.system('touch /tmp/tetrarch-pwned')", "os.system"),
    ("import subprocess\nsubprocess.run(['id'])", "_posixsubprocess"),
    ("import ctypes", "ctypes"),
    ("import os\nos.execv('/bin/sh', ['sh'])", "os.exec"),
    ("import os, signal\nos.kill(1, signal.SIGTERM)", "os.kill"),
    ("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (100, 100))", "resource.setrlimit"),
])
def test_escape_hatches_are_blocked_by_the_audit_hook(code: str, event: str) -> None:
    result = run(code)
    assert result.exit_code == 1 and "tetrarch sandbox" in result.stderr and event in result.stderr
    assert not Path("/tmp/tetrarch-pwned").exists()


def test_huge_output_is_capped_and_marked() -> None:
    result = run("print('x' * 10_000_000)")
    assert result.truncated and result.exit_code == 0
    assert result.stdout.startswith("x" * LIMITS.output_bytes)
    assert "output truncated by tetrarch: showing 4096 of 10000001 bytes" in result.stdout


def test_the_working_directory_is_fresh_and_removed() -> None:
    first = run("import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())").stdout.strip()
    second = run("import os\nprint(os.listdir('.'))")
    assert not Path(first).exists()
    assert second.stdout.strip() == "['main.py']"


@pytest.mark.parametrize(("code", "message"), [("", "empty"), ("x" * 100_001, "limit"), ("a\x00", "NUL")])
def test_bad_code_arguments_are_argument_errors(code: str, message: str) -> None:
    with pytest.raises(ToolArgumentError, match=message):
        run_sandboxed(code)


def test_the_tool_returns_a_plain_dict() -> None:
    result = run_python("print(sum(range(10)))")
    assert result["stdout"] == "45\n" and result["exit_code"] == 0 and result["timed_out"] is False
