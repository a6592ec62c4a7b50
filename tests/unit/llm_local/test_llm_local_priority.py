"""A model server in a session of its own keeps its caller's CPU priority (agents.llm.local.priority)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents.llm.local.priority import keep_caller_priority, parse_autogroup_nice


def _fake_proc(tmp_path: Path, caller: str | None, child_pid: int = 4242) -> Path:
    (tmp_path / "self").mkdir()
    (tmp_path / str(child_pid)).mkdir()
    if caller is not None:
        (tmp_path / "self" / "autogroup").write_text(caller)
    (tmp_path / str(child_pid) / "autogroup").write_text("/autogroup-2 nice 0\n")
    return tmp_path


def test_the_callers_lowered_priority_is_given_to_the_servers_group(tmp_path):
    proc = _fake_proc(tmp_path, "/autogroup-1 nice 19\n")
    assert keep_caller_priority(4242, proc) == 19
    assert (proc / "4242" / "autogroup").read_text() == "19"


@pytest.mark.parametrize("caller", [None, "/autogroup-1 nice 0\n", "unreadable"])
def test_nothing_is_written_without_autogroups_or_at_the_default_priority(tmp_path, caller):
    proc = _fake_proc(tmp_path, caller)
    assert keep_caller_priority(4242, proc) is None
    assert (proc / "4242" / "autogroup").read_text() == "/autogroup-2 nice 0\n"


def test_a_refusal_is_logged_and_the_server_runs_on(tmp_path, caplog):
    proc = _fake_proc(tmp_path, "/autogroup-1 nice 5\n", child_pid=1)
    (proc / "7").write_text("")  # its autogroup cannot be written: an OSError, as the kernel's refusal is
    assert keep_caller_priority(7, proc) is None
    assert "could not give the model server the caller's CPU priority" in caplog.text


def test_parse_reads_negative_values_and_refuses_other_text():
    assert parse_autogroup_nice("/autogroup-9 nice -5") == -5
    assert parse_autogroup_nice("") is None


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="needs Linux CFS autogroups")
def test_on_this_kernel_a_new_sessions_group_gets_the_callers_nice():
    # A helper in a session of its own lowers its group to nice 7 (this test's own group is left alone), starts a
    # child in a new session as the server is started, and reports that child's group.
    script = textwrap.dedent("""
        import subprocess, sys
        from pathlib import Path
        from agents.llm.local.priority import keep_caller_priority
        Path("/proc/self/autogroup").write_text("7")
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
        try:
            before = Path(f"/proc/{child.pid}/autogroup").read_text().split()[-1]
            written = keep_caller_priority(child.pid)
            after = Path(f"/proc/{child.pid}/autogroup").read_text().split()[-1]
            print(before, written, after)
        finally:
            child.kill()
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         start_new_session=True, check=True).stdout.split()
    assert out == ["0", "7", "7"]
