"""A model server started in a session of its own keeps the CPU priority of the process that started it.

The server runs in its own session so that stopping it ends its whole process group. On Linux with CFS autogroups
(the default) each session is also its own scheduling group, and a group's priority is its autogroup nice, not
the processes' nice values: a caller that lowered its session's priority (`echo 19 > /proc/self/autogroup`, as
CI and benchmark harnesses do to stay out of the machine's way) started a server that escaped to nice 0. On two
cores the server's two decoding threads then took nearly all the CPU from the caller's group, Ray included: the
Supervisor's event loop stood still for 5-11 s at a time (its loop watch said so), so timers fired late and the
Global Control Store missed its deadlines. Copying the caller's autogroup nice to the server's new group restores
the priority the caller chose; nothing changes where autogroups are off or the platform has none.

    >>> parse_autogroup_nice("/autogroup-4494 nice 19\\n")
    19
    >>> parse_autogroup_nice("garbage") is None
    True
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

__all__ = ["keep_caller_priority", "parse_autogroup_nice"]

log = logging.getLogger("tetrarch.local_llm")

_PROC = Path("/proc")
_NICE = re.compile(r"\bnice\s+(-?\d+)\b")


def parse_autogroup_nice(text: str) -> int | None:
    """The nice value in a ``/proc/<pid>/autogroup`` line, or None."""
    found = _NICE.search(text)
    return int(found.group(1)) if found is not None else None


def keep_caller_priority(child_pid: int, proc: Path = _PROC) -> int | None:
    """Give ``child_pid``'s autogroup the nice value of this process's autogroup, when it differs from the
    default; returns the value written, or None when nothing was written (no autogroups, the default priority,
    or the kernel refused: the server still runs, at its own group's priority)."""
    try:
        nice = parse_autogroup_nice((proc / "self" / "autogroup").read_text())
    except OSError:
        return None  # not Linux, or autogroups compiled out
    if nice is None or nice == 0:
        return None
    try:
        (proc / str(child_pid) / "autogroup").write_text(str(nice))
    except OSError as exc:
        log.warning("could not give the model server the caller's CPU priority (autogroup nice %d): %s", nice, exc)
        return None
    return nice
