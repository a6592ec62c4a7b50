"""The PostgreSQL schema and its migrations: the same tables, columns and version numbers as the SQLite
schema (``agents.store.schema``), written in PostgreSQL's types. ``store_schema`` holds the version (SQLite keeps
it in ``PRAGMA user_version``).

Differences that matter: timestamps are ``DOUBLE PRECISION`` (SQLite's ``REAL``); ``tasks.rowid`` is a
``BIGSERIAL``, so "oldest first" orders ties by insertion as SQLite's rowid does; large step outputs stay in
their rows (PostgreSQL compresses and moves large values out of line itself, and no node's disk holds a blob
file a runner on another node would need).

Two processes that open a new database at once migrate it once: the migration runs under an advisory lock and
re-reads the version after taking it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.store.errors import SchemaVersionError

__all__ = ["PG_MIGRATIONS", "migrate", "schema_version"]

_V1 = """
CREATE TABLE tasks (
    task_id        TEXT PRIMARY KEY,
    task           TEXT NOT NULL,
    status         TEXT NOT NULL,
    stopped_reason TEXT,
    created_at     DOUBLE PRECISION NOT NULL,
    updated_at     DOUBLE PRECISION NOT NULL,
    config_json    TEXT NOT NULL,
    result_json    TEXT,
    wall_s         DOUBLE PRECISION,
    total_tokens   BIGINT,
    rowid          BIGSERIAL
);
CREATE INDEX tasks_by_status ON tasks(status, created_at);
CREATE INDEX tasks_by_created ON tasks(created_at);
CREATE TABLE events (
    task_id   TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    type      TEXT NOT NULL,
    ts        DOUBLE PRECISION NOT NULL,
    body_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);
CREATE TABLE checkpoints (
    task_id    TEXT PRIMARY KEY REFERENCES tasks(task_id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    state_json TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE step_outputs (
    task_id      TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    plan_version INTEGER NOT NULL,
    step_id      INTEGER NOT NULL,
    attempt      INTEGER NOT NULL,
    body_json    TEXT,
    blob_path    TEXT,
    size         BIGINT NOT NULL,
    recorded_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (task_id, plan_version, step_id, attempt),
    CHECK ((body_json IS NULL) <> (blob_path IS NULL))
);
CREATE TABLE journal (
    key         TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL,
    output_json TEXT NOT NULL,
    recorded_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX journal_by_task ON journal(task_id);
CREATE TABLE llm_calls (
    task_id     TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    role        TEXT NOT NULL,
    record_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
)
"""

# v2 as in SQLite (leases with fencing generations, journal claims, checkpoint deltas); PostgreSQL alters the
# journal in place where SQLite had to copy it.
_V2 = """
CREATE TABLE leases (
    task_id     TEXT PRIMARY KEY REFERENCES tasks(task_id) ON DELETE CASCADE,
    generation  INTEGER NOT NULL,
    owner       TEXT NOT NULL,
    acquired_at DOUBLE PRECISION NOT NULL
);
ALTER TABLE journal ALTER COLUMN output_json DROP NOT NULL;
ALTER TABLE journal ALTER COLUMN recorded_at DROP NOT NULL;
ALTER TABLE journal ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE journal ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE journal ADD COLUMN claimant TEXT;
ALTER TABLE journal ADD COLUMN claimed_at DOUBLE PRECISION;
ALTER TABLE checkpoints ADD COLUMN at_seq INTEGER NOT NULL DEFAULT 0;
CREATE TABLE checkpoint_deltas (
    task_id    TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    delta_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
)
"""

PG_MIGRATIONS: tuple[str, ...] = (_V1, _V2)
"""``PG_MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``; kept in step with ``agents.store.schema.MIGRATIONS``."""

_LOCK_KEY = 0x7E7_4A4C  # any constant: the advisory lock only serialises tetrarch's own migrations
_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS store_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER)"


def schema_version(conn: Any) -> int:
    """The stored version (0 for an empty database). ``conn`` is a raw psycopg connection."""
    if conn.execute("SELECT to_regclass('store_schema')").fetchone()[0] is None:
        return 0
    row = conn.execute("SELECT version FROM store_schema WHERE id = 1").fetchone()
    return 0 if row is None else int(row[0])


def migrate(conn: Any, *, url: str, migrations: Sequence[str] = PG_MIGRATIONS) -> int:
    """Bring the schema up to ``len(migrations)`` in one transaction; returns the version."""
    target = len(migrations)
    if schema_version(conn) == target:
        return target
    # A session lock taken before the transaction: its first statement then sees the catalog as the previous
    # migrator committed it (a lock taken inside the transaction leaves that transaction's catalog view stale).
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        with conn.transaction():
            found = schema_version(conn)
            if found > target:
                raise SchemaVersionError(url, found, target)
            for version in range(found, target):
                for statement in migrations[version].split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(_VERSION_TABLE)
            conn.execute("INSERT INTO store_schema(id, version) VALUES (1, %s)"
                         " ON CONFLICT(id) DO UPDATE SET version = excluded.version", (target,))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return target
