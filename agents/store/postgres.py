"""The PostgreSQL backend (``RuntimeConfig(store_url="postgresql://user@host:5432/db")``): psycopg 3 with its
connection pool, the same statements as SQLite through ``agents.store.dialect``.

Transactions: a write is one ``READ COMMITTED`` transaction in which every fencing check reads the lease row
``FOR SHARE`` (``agents.store.dialect.LOCK_ROW``), so a takeover waits for a write that checked the old
generation and no stale write commits after a newer runner took the lease; two claims of one idempotency key
meet at the journal's primary key, and the second sees the first's row once it commits. Reads are autocommit
statements, except a checkpoint with its deltas: one ``REPEATABLE READ`` snapshot.

Every node's runners share the server, so no state lives on one node's disk: large outputs stay in their rows
(no blob files), and a Supervisor restarted on another node reads everything its predecessor wrote.

Example (needs a server; the tests start one, ``tests/support/postgres.py``):
    >>> backend = PgBackend("postgresql://postgres@127.0.0.1:5432/tetrarch")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agents.store.dialect import BackendKind, to_postgres
from agents.store.errors import (NoStoreError, NotAStoreError, StoreClosedError, StoreUnavailableError,
                                 StoreUnreachableError)
from agents.store.pg_schema import migrate, schema_version
from agents.store.redact import Redactor
from agents.store.scrub import ScrubReport, scrub_connection

__all__ = ["PROBE_TIMEOUT_S", "PgBackend", "PgConnection", "public_url", "unreachable"]

_INSTALL = "install the driver with pip install 'psycopg[binary,pool]' (it is a tetrarch dependency)"


PROBE_TIMEOUT_S = 5
"""How long opening a store waits for the server to answer at all (libpq counts whole seconds, at least 2)."""
_UNREACHABLE = ("connection refused", "timeout expired", "could not translate host name", "no route to host",
                "network is unreachable", "connection timed out")


def unreachable(url: str, label: str, exc: Exception) -> StoreUnavailableError:
    """The error for a failed first connection: ``StoreUnreachableError`` naming host:port when nothing answered
    there, else the server's own reason (a wrong password, a missing database)."""
    text = " ".join(str(exc).split())
    if any(marker in text.lower() for marker in _UNREACHABLE) and "password" not in text.lower():
        parts = urlsplit(url)
        where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
        return StoreUnreachableError(label, where, text)
    return StoreUnavailableError(label, f"{text}; check RuntimeConfig.store_url (user, password, database)")


def public_url(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class PgConnection:
    """A psycopg connection that takes the store's SQLite-style statements."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        # Always with parameters (even none): the translated text doubles literal '%' signs.
        return self.raw.execute(to_postgres(sql), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        cursor = self.raw.cursor()
        cursor.executemany(to_postgres(sql), list(rows))
        return cursor


class PgBackend:
    """A connection pool to one database; safe to share between threads, rebuilt after a ``fork``."""

    kind: BackendKind = "postgresql"
    blobs = None

    def __init__(self, url: str, *, pool_size: int = 8, connect_timeout_s: float = 30.0, create: bool = True,
                 probe_timeout_s: int = PROBE_TIMEOUT_S) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise StoreUnavailableError(public_url(url), f"{exc}; {_INSTALL}") from None
        self.url, self.label = url, public_url(url)
        self.integrity_errors: tuple[type[BaseException], ...] = (psycopg.IntegrityError,)
        self._pool_type, self._pool_size, self._timeout = ConnectionPool, pool_size, connect_timeout_s
        self._create, self._probe_timeout_s = create, probe_timeout_s
        self._lock = threading.Lock()
        self._pool: Any = None
        self._pid = os.getpid()
        self._open()

    def _open(self) -> None:
        # One plain connection first, with a short connect timeout: the pool retries a refused connection until its
        # own timeout (30 s) and then says only PoolTimeout. The probe also checks (and migrates) the schema.
        import psycopg

        self._prepare_schema()
        pool = self._pool_type(self.url, min_size=1, max_size=self._pool_size, open=False,
                               kwargs={"autocommit": True}, timeout=self._timeout, name="tetrarch-store")
        try:
            pool.open(wait=True, timeout=self._timeout)
        except (psycopg.OperationalError, TimeoutError) as exc:
            pool.close()
            raise StoreUnavailableError(self.label, f"{type(exc).__name__}: {exc}; start the server, or check "
                                        "RuntimeConfig.store_url (user, host, port, database)") from None
        except BaseException:
            pool.close()
            raise
        self._pool, self._pid = pool, os.getpid()

    def _prepare_schema(self) -> None:
        import psycopg

        try:
            raw = psycopg.connect(self.url, autocommit=True, connect_timeout=self._probe_timeout_s)
        except psycopg.OperationalError as exc:
            raise unreachable(self.url, self.label, exc) from None
        try:
            found = schema_version(raw)
            if found == 0 and raw.execute("SELECT to_regclass('tasks')").fetchone()[0] is not None:
                raise NotAStoreError(self.label, "it has a tasks table but no store_schema: another program's")
            if found == 0 and not self._create:
                raise NoStoreError(self.label, "the database holds no task store: it is empty")
            migrate(raw, url=self.label)
        except psycopg.OperationalError as exc:  # the server went away, or refuses our DDL
            raise StoreUnavailableError(self.label, f"{type(exc).__name__}: {exc}; check the server and "
                                        "RuntimeConfig.store_url (user, host, port, database)") from None
        finally:
            raw.close()

    def _current_pool(self) -> Any:
        with self._lock:
            if self._pool is None:
                raise StoreClosedError(self.label)
            if os.getpid() != self._pid:
                self._open()  # the pool's sockets and threads do not survive fork(): the child opens its own
            return self._pool

    @contextlib.contextmanager
    def read(self, consistent: bool = False) -> Iterator[PgConnection]:
        """Autocommit reads (one round trip a statement); ``consistent``: one REPEATABLE READ snapshot."""
        with self._current_pool().connection() as raw:
            if not consistent:
                yield PgConnection(raw)
                return
            raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield PgConnection(raw)
            finally:
                raw.execute("COMMIT")

    @contextlib.contextmanager
    def write(self) -> Iterator[PgConnection]:
        with self._current_pool().connection() as raw, raw.transaction():
            yield PgConnection(raw)

    def schema_version(self) -> int:
        with self._current_pool().connection() as raw:
            return schema_version(raw)

    def vacuum(self) -> None:
        with self._current_pool().connection() as raw:
            raw.execute("VACUUM")

    def scrub(self, task_id: str, secrets: Iterable[str]) -> ScrubReport:
        """Rewrite the task's rows with ``secrets`` redacted. The old row versions stay in the server's files and
        write-ahead log until autovacuum and checkpoints pass (``wal_truncated`` is False: not guaranteed)."""
        redactor = Redactor.build(secrets)
        if not redactor.secrets:
            return ScrubReport(0, True)
        with self.write() as conn:
            rows = scrub_connection(conn, task_id, redactor)
        return ScrubReport(rows, False)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pid == os.getpid():
            pool.close()
