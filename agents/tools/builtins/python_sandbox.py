"""``run_python``: run model-written Python in a throw-away process that cannot hurt the host.

    >>> run_sandboxed("print(6 * 7)").stdout
    '42\\n'

Layers, each enough to stop a different attack (PEP 578 says audit hooks alone are not a sandbox):

1. resource limits set in the child before user code runs: CPU time, address space, file size, open
   files, processes;
2. a wall-clock timeout that kills the whole process group;
3. when started as root: a fresh network namespace (``unshare --net``, only a downed loopback inside) and
   the child drops to ``nobody:nogroup`` with no supplementary groups, so file permissions protect the host
   and RLIMIT_NPROC applies (root ignores it);
4. an audit hook installed before user code, which cannot be removed from Python: no sockets, no
   subprocesses/fork/exec/kill, no ctypes, reads only from its working directory and the standard library,
   writes only inside its working directory.

Every run gets a fresh temporary working directory that is deleted afterwards. Output is capped; the
result says what was cut and which limit stopped the program.
"""

from __future__ import annotations

import functools
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agents.tools.decorator import tool
from agents.tools.errors import PermanentToolError, ToolArgumentError

__all__ = ["SandboxLimits", "SandboxResult", "run_python", "run_sandboxed"]

MAX_CODE_CHARS = 100_000


@dataclass(frozen=True)
class SandboxLimits:
    cpu_seconds: int = 10
    wall_seconds: float = 15.0
    memory_bytes: int = 512 * 2**20
    file_bytes: int = 10 * 2**20
    open_files: int = 64
    processes: int = 64
    output_bytes: int = 64 * 2**10


@dataclass
class SandboxResult:
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool = False
    signal: str | None = None
    truncated: bool = False
    isolation: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code,
                "timed_out": self.timed_out, "signal": self.signal, "truncated": self.truncated,
                "isolation": self.isolation}


# Runs in the child before any user code: limits, privilege drop, then the audit hook, then the program.
_BOOTSTRAP = r'''
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
for name, value in cfg["rlimits"].items():
    soft, hard = value
    resource.setrlimit(getattr(resource, name), (soft, hard))
if cfg["uid"] is not None:
    os.setgroups([])
    os.setgid(cfg["gid"])
    os.setuid(cfg["uid"])
    if os.getuid() != cfg["uid"]:
        raise SystemExit("tetrarch sandbox: could not drop privileges")

def _install(workdir, read_roots):
    realpath, sep, fspath = os.path.realpath, os.sep, os.fspath
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    blocked_prefixes = ("socket.", "subprocess.", "os.exec", "os.fork", "os.posix_spawn", "os.spawn",
                        "os.system", "os.kill", "os.killpg", "os.setuid", "os.setgid", "os.setgroups",
                        "ctypes.", "pty.", "signal.pthread_kill", "resource.setrlimit", "resource.prlimit",
                        "_posixsubprocess.", "mmap.")
    blocked_imports = frozenset({"ctypes", "_ctypes", "_posixsubprocess", "cffi", "_ssl"})
    modify_events = frozenset({"os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.chmod", "os.chown",
                               "os.link", "os.symlink", "os.truncate", "os.utime", "os.chdir", "shutil.rmtree",
                               "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.move",
                               "shutil.chown"})
    list_events = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.walk", "os.fwalk"})

    def inside(path, roots):
        if isinstance(path, int):
            return True
        try:
            p = realpath(fspath(path) if not isinstance(path, bytes) else path.decode())
        except (TypeError, ValueError):
            return False
        return any(p == r or p.startswith(r + sep) for r in roots)

    def deny(what, event):
        raise PermissionError(f"tetrarch sandbox: {what} is not allowed ({event})")

    def hook(event, args):
        if event.startswith(blocked_prefixes):
            deny("this operation", event)
        if event == "import" and args[0].split(".")[0] in blocked_imports:
            deny(f"importing {args[0]}", event)
        if event == "open":
            path, mode, flags = args
            writes = (isinstance(flags, int) and flags & write_flags) or (
                isinstance(mode, str) and any(c in mode for c in "wax+"))
            if writes and not inside(path, (workdir,)):
                deny(f"writing {path!r} outside the working directory", event)
            if not inside(path, read_roots):
                deny(f"reading {path!r}", event)
        elif event in modify_events:
            for arg in args[:2]:
                if isinstance(arg, (str, bytes, os.PathLike)) and not inside(arg, (workdir,)):
                    deny(f"changing {arg!r} outside the working directory", event)
        elif event in list_events and args and isinstance(args[0], (str, bytes, os.PathLike)):
            if not inside(args[0], read_roots):
                deny(f"listing {args[0]!r}", event)

    sys.addaudithook(hook)

_workdir = os.path.realpath(os.getcwd())
_roots = tuple({os.path.realpath(p) for p in sys.path if p} | {_workdir, "/dev/null", "/dev/urandom"})
if cfg["audit_hook"]:
    _install(_workdir, _roots)
del _install, _roots, cfg
with open("main.py", encoding="utf-8") as _f:
    _code = compile(_f.read(), "main.py", "exec")
del _f
exec(_code, {"__name__": "__main__", "__builtins__": __builtins__})
'''


def _reachable_by_others(path: str) -> bool:
    """True when every directory above ``path`` is searchable and the file readable+executable by others."""
    real = Path(os.path.realpath(path))
    try:
        for parent in real.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
        mode = real.stat().st_mode
    except OSError:
        return False
    return bool(mode & stat.S_IXOTH and mode & stat.S_IROTH)


@functools.cache
def _interpreter(dropping_privileges: bool) -> str:
    candidates = [getattr(sys, "_base_executable", None), sys.executable, "/usr/bin/python3",
                  shutil.which("python3")]
    for candidate in candidates:
        if candidate and os.path.exists(candidate) and (not dropping_privileges or _reachable_by_others(candidate)):
            return candidate
    raise PermanentToolError("no Python interpreter is readable by the unprivileged sandbox user; install "
                             "python3 system-wide (e.g. apt install python3)")


@functools.cache
def _can_unshare_network() -> bool:
    unshare = shutil.which("unshare")
    if not unshare or os.geteuid() != 0:
        return False
    try:
        return subprocess.run([unshare, "--net", "--", "true"], capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _sandbox_user() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


class _CappedReader(threading.Thread):
    """Drains a pipe to the end (so the child never blocks on a full pipe) but keeps only ``cap`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        while chunk := self.stream.read1(65536):
            self.total += len(chunk)
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            text += f"\n…[output truncated by tetrarch: showing {len(self.kept)} of {self.total} bytes]"
        return text


def _check_code(code: str) -> None:
    if not isinstance(code, str) or not code.strip():
        raise ToolArgumentError("code is empty; pass a Python program that prints its result")
    if len(code) > MAX_CODE_CHARS:
        raise ToolArgumentError(f"code is {len(code)} characters; the limit is {MAX_CODE_CHARS}")
    if "\x00" in code:
        raise ToolArgumentError("code contains a NUL byte")


def _rlimits(limits: SandboxLimits) -> dict[str, tuple[int, int]]:
    """The child's resource limits, by ``resource`` constant name (the bootstrap sets them before user code)."""
    return {
        "RLIMIT_CPU": (limits.cpu_seconds, limits.cpu_seconds + 1),
        "RLIMIT_AS": (limits.memory_bytes, limits.memory_bytes),
        "RLIMIT_FSIZE": (limits.file_bytes, limits.file_bytes),
        "RLIMIT_NOFILE": (limits.open_files, limits.open_files),
        "RLIMIT_NPROC": (limits.processes, limits.processes),
        "RLIMIT_CORE": (0, 0),
    }


def _command(config: str, user: tuple[int, int] | None, isolation: list[str]) -> list[str]:
    """The child's command line; wrapped in ``unshare --net`` where this machine allows (noted in ``isolation``)."""
    command = [_interpreter(user is not None), "-I", "-S", "-B", "-c", _BOOTSTRAP, config]
    if _can_unshare_network():
        command = [shutil.which("unshare") or "unshare", "--net", "--", *command]
        isolation.append("netns")
    return command


def _run_child(command: list[str], workdir: Path, limits: SandboxLimits,
               isolation: list[str]) -> SandboxResult:
    """Start the child in its own session, drain its output, and kill the session at exit or at the wall limit."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": str(workdir)}
    proc = subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
    assert proc.stdout is not None and proc.stderr is not None
    readers = [_CappedReader(proc.stdout, limits.output_bytes), _CappedReader(proc.stderr, limits.output_bytes)]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # Whatever the program left behind in its session goes too (a daemonised grandchild, say).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    code_ = proc.returncode
    signal_name = signal.Signals(-code_).name if code_ is not None and code_ < 0 else None
    return SandboxResult(
        stdout=readers[0].text(), stderr=readers[1].text(), exit_code=code_, timed_out=timed_out,
        signal=signal_name, truncated=any(r.total > len(r.kept) for r in readers), isolation=isolation)


def run_sandboxed(code: str, limits: SandboxLimits = SandboxLimits(), *, audit_hook: bool = True) -> SandboxResult:
    """Run ``code`` as ``__main__`` under every isolation layer this machine supports.

    ``audit_hook=False`` exists so tests can show the other layers hold on their own; never turn it off
    for model-written code.
    """
    _check_code(code)
    user = _sandbox_user()
    isolation = ["rlimits", "wall-timeout", "fresh-workdir"] + (["audit-hook"] if audit_hook else [])
    rlimits = _rlimits(limits)
    workdir = Path(tempfile.mkdtemp(prefix="tetrarch-py-"))
    try:
        (workdir / "main.py").write_text(code, encoding="utf-8")
        if user is not None:
            os.chown(workdir, *user)
            os.chown(workdir / "main.py", *user)
            isolation.append("uid-nobody")
        config = json.dumps({"rlimits": rlimits, "audit_hook": audit_hook, "uid": user[0] if user else None, "gid": user[1] if user else None})
        return _run_child(_command(config, user, isolation), workdir, limits, isolation)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@tool(permission="write", timeout_s=30)
def run_python(code: str) -> dict[str, Any]:
    """Run a short Python 3 program in an isolated sandbox and return what it printed. Only the standard
    library is available; there is no network and no access to files outside a fresh scratch folder.

    Args:
        code: A complete program. Print the values you need: only stdout and stderr come back, with
            exit_code, timed_out (wall-clock limit 15 s) and signal (e.g. SIGXCPU after 10 s of CPU).
    """
    return run_sandboxed(code).as_dict()
