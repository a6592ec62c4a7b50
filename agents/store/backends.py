"""Where a ``Store``'s rows live: an embedded SQLite file (the default) or a PostgreSQL server (clusters).

A backend hands out connections for one read or one write transaction; every statement the store runs is
written once, in the SQL both databases share (``agents.store.dialect``), against the small ``Connection``
protocol below, which ``sqlite3.Connection`` has and ``agents.store.postgres.PgConnection`` adds to psycopg.

Example:
    >>> import tempfile, pathlib
    >>> backend = open_backend(pathlib.Path(tempfile.mkdtemp()) / "b.db")
    >>> (backend.kind, backend.schema_version())
    ('sqlite', 2)
    >>> with backend.write() as conn:
    ...     _ = conn.execute("INSERT INTO tasks(task_id, task, status, created_at, updated_at, config_json)"
    ...                      " VALUES (?, 'x', 'submitted', 0, 0, '{}')", ("t1",))
    >>> with backend.read() as conn:
    ...     conn.execute("SELECT task_id FROM tasks").fetchall()
    [('t1',)]
    >>> backend.close()
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from agents.store.blobs import BlobDir
from agents.store.dialect import BackendKind, is_postgres_url
from agents.store.errors import StoreClosedError
from agents.store.identity import mark
from agents.store.opening import configure, identify_or_refuse, open_store_file
from agents.store.schema import migrate, schema_version
from agents.store.scrub import ScrubReport, scrub_task
from agents.store.wal_checkpoints import FALLBACK_PAGES, WalCheckpoints

__all__ = ["Backend", "BackendKind", "Connection", "Cursor", "SqliteBackend", "open_backend"]


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the store's SQL runs on: SQLite's parameter style, one transaction per ``read``/``write``."""

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...


class Backend(Protocol):
    kind: BackendKind
    label: str
    """The file path, or the server URL without its password: what messages name."""
    blobs: BlobDir | None
    """Where outputs above the blob threshold go; None keeps every output in its row."""
    integrity_errors: tuple[type[BaseException], ...]

    def read(self, consistent: bool = False) -> contextlib.AbstractContextManager[Connection]:
        """A connection for reads; ``consistent``: every statement sees one snapshot (else each its own)."""
        ...

    def write(self) -> contextlib.AbstractContextManager[Connection]: ...

    def schema_version(self) -> int: ...

    def vacuum(self) -> None: ...

    def scrub(self, task_id: str, secrets: Iterable[str]) -> ScrubReport: ...

    def close(self) -> None: ...


class SqliteBackend:
    """One connection behind a lock, safe to share between threads; reopened after a ``fork``."""

    kind: BackendKind = "sqlite"
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: Path, *, durable: bool = False, create: bool = True) -> None:
        self.path = path.expanduser().absolute()
        self.label = str(self.path)
        self.blobs: BlobDir | None = BlobDir(self.path)
        self._durable, self._create = durable, create
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._checkpoints: WalCheckpoints | None = None
        """Copies the log into the file off the writer's thread (``agents.store.wal_checkpoints``)."""
        self._pid = os.getpid()
        self._open()

    def _open(self) -> None:
        conn = open_store_file(self.path, create=self._create)
        try:
            found = identify_or_refuse(conn, self.label, create=self._create)
            configure(conn, durable=self._durable)
            migrate(conn, path=self.label)
            if self._create and not found.marked:
                mark(conn)
            conn.execute(f"PRAGMA wal_autocheckpoint = {FALLBACK_PAGES}")
        except BaseException:
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        # After a fork too: the parent's thread is not in the child.
        self._checkpoints = WalCheckpoints(self.path, total_changes=conn.total_changes)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreClosedError(str(self.path))
        if os.getpid() != self._pid:
            # A connection must not cross fork(): the child abandons the inherited one and opens its own.
            self._open()
        assert self._conn is not None
        return self._conn

    @contextlib.contextmanager
    def read(self, consistent: bool = False) -> Iterator[sqlite3.Connection]:
        # One connection behind the lock: this process writes nothing in between; consistent reads against other
        # processes' writes would need a read transaction, which the single-statement reads do not.
        with self._lock:
            yield self._connection()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. IMMEDIATE takes the write lock first, so it never fails half-way with BUSY."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # some errors (disk full, I/O) already rolled back
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            if self._checkpoints is not None:
                self._checkpoints.committed(conn.total_changes)

    def schema_version(self) -> int:
        with self.read() as conn:
            return schema_version(conn)

    def vacuum(self) -> None:
        with self.read() as conn:
            conn.execute("VACUUM")

    def scrub(self, task_id: str, secrets: Iterable[str]) -> ScrubReport:
        return scrub_task(self.path, task_id, secrets)

    def close(self) -> None:
        with self._lock:
            if self._checkpoints is not None and os.getpid() == self._pid:
                self._checkpoints.close()
            if self._conn is not None:
                self._conn, conn = None, self._conn
                conn.close()


def open_backend(where: Path | str, *, durable: bool = False, pool_size: int = 8, create: bool = True) -> Backend:
    """SQLite for a path, PostgreSQL for a ``postgresql://`` URL (psycopg 3 and its pool, imported only then).
    ``create=False``: a missing or empty store is ``NoStoreError`` instead of a new one (commands that only read)."""
    if is_postgres_url(where):
        from agents.store.postgres import PgBackend

        return PgBackend(str(where), pool_size=pool_size, create=create)
    return SqliteBackend(Path(where), durable=durable, create=create)

