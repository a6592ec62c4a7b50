"""``handle.result()`` for many handles without a round trip each: each wait for one task's result also brings
back the finished results of the other tasks this Orchestrator submitted and nobody has read yet.

Reading 1,000 results one handle after another was 1,000 Supervisor calls (on Ray about 1.3 ms of the shard's CPU
and 1 ms of the driver's each, a quarter of a one-step task's cost). Now the call that waits for task A names up
to ``BATCH`` other unread tasks; the Supervisor answers A's wait as before and adds whichever of the others it
holds finished in memory, and their handles' ``result()`` then returns without a call. Only final results are
kept (not "escalated" or "cancelled", which ``respond``/``resume`` continue), only for a handle's first run,
and each is handed out once: a second reader, or a later run, asks the Supervisor as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from itertools import islice
from typing import Any

__all__ = ["ResultReads"]

BATCH = 256
"""At most this many other tasks named per call (the call's size stays small)."""
TRACKED = 8192
"""At most this many unread tasks remembered (a caller that never reads its handles costs bounded memory)."""
_CONTINUED = ("escalated", "cancelled")


class ResultReads:
    """``call(task_id, run, wait_s, others)`` is the Supervisor's ``wait_results``: ``(own, {task_id: result})``."""

    def __init__(self, call: Callable[[str, int, float, list[str]], tuple[Any, dict[str, Any]]]) -> None:
        self._call = call
        self._lock = threading.Lock()
        self._unread: dict[str, None] = {}  # submitted, not yet read: an ordered set
        self._got: dict[str, Any] = {}

    def submitted(self, task_id: str) -> None:
        with self._lock:
            if len(self._unread) < TRACKED:
                self._unread[task_id] = None

    def wait(self, task_id: str, run: int, wait_s: float) -> Any:
        """Task ``task_id``'s result of run ``run`` or later (JSON), or None when not finished within ``wait_s``."""
        with self._lock:
            data = self._got.pop(task_id, None) if run == 1 else None
            if data is not None:
                self._unread.pop(task_id, None)
                return data
            others = [t for t in islice(self._unread, BATCH + 1) if t != task_id][:BATCH]
        own, done = self._call(task_id, run, wait_s, others)
        with self._lock:
            if own is not None:
                self._unread.pop(task_id, None)
                self._got.pop(task_id, None)
            for other, result in done.items():
                if other in self._unread and result.get("status") not in _CONTINUED:
                    self._got[other] = result
        return own
