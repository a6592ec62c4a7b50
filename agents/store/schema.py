"""Connection setup, the schema and its migrations (``PRAGMA user_version`` holds the version).

Durability trade-off: WAL with ``synchronous=NORMAL`` never corrupts the database and never loses a
commit when a *process* dies (SIGKILL, OOM, Ray killing an actor) — the case this runtime is built for.
After an OS crash or power loss the last few commits may roll back (the database stays consistent).
``durable=True`` selects ``synchronous=FULL``: every commit is fsynced, at roughly one extra fsync per
state transition.

Example:
    >>> import sqlite3
    >>> conn = open_connection(":memory:", durable=False)
    >>> migrate(conn, path=":memory:")
    2
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence

from agents.store.errors import SchemaVersionError

__all__ = [
    "BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Migration",
    "configure",
    "migrate",
    "open_connection",
    "schema_version",
]

Migration = Callable[[sqlite3.Connection], None]
"""Upgrades the schema by one version; runs inside the migration's write transaction."""

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for another process's write transaction (commits here take milliseconds)."""

_V1 = """
CREATE TABLE tasks (
    task_id        TEXT PRIMARY KEY,
    task           TEXT NOT NULL,
    status         TEXT NOT NULL,
    stopped_reason TEXT,
    created_at     REAL NOT NULL,
    updated_at     REAL NOT NULL,
    config_json    TEXT NOT NULL,
    result_json    TEXT,
    wall_s         REAL,
    total_tokens   INTEGER
);
CREATE INDEX tasks_by_status ON tasks(status, created_at);
CREATE INDEX tasks_by_created ON tasks(created_at);
CREATE TABLE events (
    task_id   TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    type      TEXT NOT NULL,
    ts        REAL NOT NULL,
    body_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;
CREATE TABLE checkpoints (
    task_id    TEXT PRIMARY KEY REFERENCES tasks(task_id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    state_json TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE step_outputs (
    task_id      TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    plan_version INTEGER NOT NULL,
    step_id      INTEGER NOT NULL,
    attempt      INTEGER NOT NULL,
    body_json    TEXT,
    blob_path    TEXT,
    size         INTEGER NOT NULL,
    recorded_at  REAL NOT NULL,
    PRIMARY KEY (task_id, plan_version, step_id, attempt),
    CHECK ((body_json IS NULL) <> (blob_path IS NULL))
) WITHOUT ROWID;
CREATE TABLE journal (
    key         TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL,
    output_json TEXT NOT NULL,
    recorded_at REAL NOT NULL
);
CREATE INDEX journal_by_task ON journal(task_id);
CREATE TABLE llm_calls (
    task_id     TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    role        TEXT NOT NULL,
    record_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;
"""
# The journal has no foreign key: executors write it through their own connection with a task id parsed
# from the idempotency key, which need not name a task row; delete_task removes entries by task_id.


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    # statement by statement (not executescript): executescript commits, and a migration is one transaction
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v0_to_v1(conn: sqlite3.Connection) -> None:
    _run_script(conn, _V1)


# v2: ownership with fencing and append-only checkpoint deltas.
# - leases: one row per task; ``generation`` grows by one each time a runner takes the task over, and every
#   write of a runner names the generation it holds (a stale runner's writes are refused).
# - journal: a row is first a *claim* (no output yet; the claimant's generation and dispatch token), then a
#   *record* (the output). Claiming before the side effect is what makes two live runners run it once.
# - checkpoint_deltas: what changed since the last full checkpoint, one row per write; the reader rebuilds the
#   checkpoint from the full row plus the deltas after its ``at_seq``.
_V2 = """
CREATE TABLE leases (
    task_id     TEXT PRIMARY KEY REFERENCES tasks(task_id) ON DELETE CASCADE,
    generation  INTEGER NOT NULL,
    owner       TEXT NOT NULL,
    acquired_at REAL NOT NULL
);
CREATE TABLE journal_v2 (
    key         TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL,
    output_json TEXT,
    recorded_at REAL,
    generation  INTEGER NOT NULL DEFAULT 0,
    token       INTEGER NOT NULL DEFAULT 0,
    claimant    TEXT,
    claimed_at  REAL
);
INSERT INTO journal_v2(key, task_id, output_json, recorded_at)
    SELECT key, task_id, output_json, recorded_at FROM journal;
DROP TABLE journal;
ALTER TABLE journal_v2 RENAME TO journal;
CREATE INDEX journal_by_task ON journal(task_id);
ALTER TABLE checkpoints ADD COLUMN at_seq INTEGER NOT NULL DEFAULT 0;
CREATE TABLE checkpoint_deltas (
    task_id    TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    delta_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;
"""


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    _run_script(conn, _V2)


MIGRATIONS: tuple[Migration, ...] = (_v0_to_v1, _v1_to_v2)
"""``MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``; append one function per schema change."""
SCHEMA_VERSION = len(MIGRATIONS)


def open_connection(path: str, *, durable: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit ``BEGIN IMMEDIATE``) with our pragmas."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    configure(conn, durable=durable)
    return conn


def configure(conn: sqlite3.Connection, *, durable: bool) -> None:
    """The store's pragmas on an open connection (WAL is written into the file: set it only on a store)."""
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    _enable_wal(conn)
    conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys = ON")


def _enable_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode = WAL``, waiting for other openers like any writer would.

    Switching a new file to WAL needs an exclusive lock, and SQLite answers "database is locked" at once instead of
    calling the busy handler while another connection holds it: threads or processes opening one new store together
    then failed about one time in ten. Here that wait gets the same patience as ``busy_timeout``."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, *, path: str, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the schema up to ``len(migrations)``; returns the version. Safe when processes race to do it."""
    target = len(migrations)
    if schema_version(conn) == target:
        return target
    # IMMEDIATE takes the write lock first, so two processes opening a new file migrate it once.
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = schema_version(conn)
        if found > target:
            raise SchemaVersionError(path, found, target)
        for version in range(found, target):
            migrations[version](conn)
        conn.execute(f"PRAGMA user_version = {target}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return target
