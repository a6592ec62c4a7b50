"""One SQLite connection per memory object, on the same file as the task store, with the store's pragmas — or one
PostgreSQL connection, when the path is a ``postgresql://`` URL (sessions and the plan cache of a cluster live on
the task store's server, so every Supervisor shard on any node reads them).

The memory tables live beside the store's tables but never touch ``PRAGMA user_version`` (the store's
migrations own it): each layer creates its tables with ``IF NOT EXISTS`` and records its own schema version in
``memory_schema``, so a store file created before memory existed gains the tables on first use.

Example:
    >>> db = Database(":memory:")
    >>> db.ensure_schema("example", 1, ["CREATE TABLE IF NOT EXISTS memory_example (x INTEGER)"])
    >>> with db.write() as conn:
    ...     _ = conn.execute("INSERT INTO memory_example VALUES (1)")
    >>> db.read("SELECT x FROM memory_example")
    [(1,)]
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.memory.errors import FTS5UnavailableError, InvalidMemoryArgumentError

__all__ = ["BUSY_TIMEOUT_MS", "Database", "has_fts5"]

BUSY_TIMEOUT_MS = 30_000
"""Same as the task store: a writer waits this long for another process's (millisecond) transaction."""

_SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS memory_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
_PG_LOCK_KEY = 0x7E7_4D45  # serialises tetrarch's memory DDL between processes on one server


def is_server_url(path: object) -> bool:
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


_PARAM = re.compile(r"'(?:[^']|'')*'|\?|%")


def _pg_sql(sql: str) -> str:
    """The memory layer's SQL (portable, ``?`` parameters) in psycopg's style; DDL in PostgreSQL's types.
    (The task store has its own, fuller translation in ``agents.store.dialect``; this layer may not import it.)"""
    sql = _PARAM.sub(lambda m: m.group(0).replace("%", "%%") if m.group(0).startswith("'")
                     else ("%s" if m.group(0) == "?" else "%%"), sql)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql.replace("WITHOUT ROWID", ""))


class _PgConnection:
    """A psycopg connection (autocommit; ``write`` sends BEGIN/COMMIT) taking the SQLite-style statements."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise InvalidMemoryArgumentError("store_url", url, f"{exc}; pip install 'psycopg[binary,pool]'") from None
        self.raw = psycopg.connect(url, autocommit=True)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(_pg_sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Any) -> Any:
        cursor = self.raw.cursor()
        cursor.executemany(_pg_sql(sql), list(rows))
        return cursor

    def close(self) -> None:
        self.raw.close()


def has_fts5() -> bool:
    """Whether this Python's sqlite3 can create FTS5 tables (some minimal builds cannot)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


class Database:
    """A thread-safe connection (tools may call from a thread pool) in autocommit mode; writes go through
    ``write()``, one ``BEGIN IMMEDIATE`` transaction each, so readers never see half a document or half a turn."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn: Any
        if is_server_url(self.path):
            self._conn = _PgConnection(self.path)
            return
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self.path = str(Path(self.path).expanduser())
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                     check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute("PRAGMA foreign_keys = ON")

    def ensure_schema(self, component: str, version: int, ddl: Sequence[str], *, needs_fts5: bool = False) -> None:
        """Create ``component``'s tables if missing (``ddl``: one statement each, all ``IF NOT EXISTS``, since
        trigger bodies hold semicolons). A newer version than this code knows is refused."""
        if needs_fts5 and not has_fts5():
            raise FTS5UnavailableError(sqlite3.sqlite_version)
        pg = isinstance(self._conn, _PgConnection)
        if pg:  # taken before the transaction, so its catalog view includes what another process just created
            self._conn.execute("SELECT pg_advisory_lock(?)", (_PG_LOCK_KEY,))
        try:
            self._create(component, version, ddl)
        finally:
            if pg:
                self._conn.execute("SELECT pg_advisory_unlock(?)", (_PG_LOCK_KEY,))

    def _create(self, component: str, version: int, ddl: Sequence[str]) -> None:
        with self.write() as conn:
            conn.execute(_SCHEMA_TABLE)
            row = conn.execute("SELECT version FROM memory_schema WHERE component = ?", (component,)).fetchone()
            if row is not None and row[0] > version:
                raise InvalidMemoryArgumentError(
                    "store_path", self.path,
                    f"its {component} tables have version {row[0]}, newer than this tetrarch ({version}); "
                    "upgrade tetrarch or use another store file")
            for statement in ddl:
                conn.execute(statement)
            conn.execute("INSERT INTO memory_schema VALUES (?, ?) ON CONFLICT(component) DO UPDATE"
                         " SET version = excluded.version", (component, version))

    @contextmanager
    def write(self) -> Iterator[Any]:
        with self._lock:
            self._conn.execute("BEGIN" if isinstance(self._conn, _PgConnection) else "BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
