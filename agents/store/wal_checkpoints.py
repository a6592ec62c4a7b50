"""The SQLite store's write-ahead log copied into its database file on a thread of its own.

SQLite copies the WAL into the database file (a checkpoint, with its fsync) inside the ``COMMIT`` that takes
the log past ``wal_autocheckpoint`` pages. Under a Supervisor's group commits every commit did (a group of ~70
one-step tasks rewrites ~2,000 pages), on the event loop's thread: ~0.2 ms of a task's ~3 ms, all of it time
the loop ran nothing else. Here the writer only counts the rows its commits changed and wakes a checkpointer
thread every ``CHECKPOINT_ROWS`` of them; the thread runs a ``PASSIVE`` checkpoint on a connection of its own
(SQLite releases the GIL while it copies), which never blocks a writer or a reader. What a commit made durable
is unchanged: a committed transaction is in the log either way, and a checkpoint interrupted by a crash is
redone on the next open. The writer's own checkpoint stays as a bound (``FALLBACK_PAGES``) should the thread
fall behind.

    >>> import tempfile, pathlib
    >>> checkpoints = WalCheckpoints(pathlib.Path(tempfile.mkdtemp()) / "s.db", total_changes=0)
    >>> checkpoints.committed(10)          # far below CHECKPOINT_ROWS: nothing is started
    >>> checkpoints.close()
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from pathlib import Path
from urllib.parse import quote

from agents.store.schema import BUSY_TIMEOUT_MS

__all__ = ["CHECKPOINT_ROWS", "FALLBACK_PAGES", "WalCheckpoints"]

log = logging.getLogger("tetrarch.store")

CHECKPOINT_ROWS = 1000
"""Rows changed by commits between two checkpoints: about SQLite's default of 1,000 log pages (a row written
at a random key dirties a page of its own)."""
FALLBACK_PAGES = 4000
"""``wal_autocheckpoint`` of the writing connection: it checkpoints itself only past this many log pages."""


class WalCheckpoints:
    """The checkpointer of one store file: ``committed`` after each commit, ``close`` with the store."""

    def __init__(self, path: Path, *, total_changes: int) -> None:
        """``total_changes``: the writing connection's count so far (what changes from here on counts)."""
        self._path = path
        self._changed = 0
        self._last_total = total_changes
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        self.done = 0
        """Checkpoints the thread has run (tests read it)."""

    def committed(self, total_changes: int) -> None:
        """After a commit on the writing connection, with its ``total_changes``: wake the thread once enough
        rows changed since its last checkpoint."""
        self._changed += total_changes - self._last_total
        self._last_total = total_changes
        if self._changed < CHECKPOINT_ROWS or self._closed:
            return
        self._changed = 0
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="tetrarch-wal-checkpoint", daemon=True)
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        try:  # mode=rw: the store's file exists (it is being written); a deleted one is not made again
            conn = sqlite3.connect(f"file:{quote(str(self._path))}?mode=rw", uri=True,
                                   timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            log.warning("the store's WAL checkpointer could not open %s (%s); the writer checkpoints it",
                        self._path, exc)
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # the writer's own checkpoint (FALLBACK_PAGES) bounds the log
                    log.warning("the store's WAL checkpoint failed (%s); the writer will checkpoint it", exc)
                self.done += 1
        finally:
            conn.close()

    def close(self) -> None:
        """Stop the thread (after the checkpoint it may be running)."""
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            with contextlib.suppress(RuntimeError):
                self._thread.join(timeout=30)
