"""Redact a secret from a task's records written *before* it became known.

A user usually gives a tool's secret (a token for its ``secret_params``) in the task text. The store redacts
registered secrets from everything it writes, but the task row, the ``task_submitted`` event and the router's
LLM-call record are written before the plan names the secret: they held it in clear (39 copies in the WAL in
the report). ``scrub_task`` rewrites those rows of one task with the secret redacted, on a connection of its own
with ``secure_delete`` (freed cells are zeroed, not left in the page), then truncates the WAL so the old frames
do not linger in the ``-wal`` file either.

What it cannot reach: copies outside this SQLite file — the live process memory and Ray's object store (the
task text travels through both), the LLM server's own logs, and a WAL checkpoint that another open reader
blocks (``ScrubReport.wal_truncated`` is then False; the next checkpoint after the reader finishes clears it).

Example:
    >>> import pathlib, tempfile
    >>> from agents.store import Store
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.db"
    >>> with Store(path) as store:
    ...     store.create_task("t1", "use token tok-12345 to fetch", {})
    >>> scrub_task(path, "t1", ["tok-12345"]).rows
    1
    >>> Store(path).get_task("t1").task
    'use token [REDACTED] to fetch'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.store.codec import decode, encode
from agents.store.redact import Redactor
from agents.store.schema import open_connection

__all__ = ["ScrubReport", "scrub_connection", "scrub_task"]

# (table, its primary key, column, whether the column holds JSON) of every record of a task (the tables are
# WITHOUT ROWID, so rows are addressed by their keys); each table has a task_id column.
_COLUMNS: tuple[tuple[str, str, str, bool], ...] = (
    ("tasks", "task_id", "task", False),
    ("tasks", "task_id", "result_json", True),
    ("events", "task_id, seq", "body_json", True),
    ("checkpoints", "task_id", "state_json", True),
    ("step_outputs", "task_id, plan_version, step_id, attempt", "body_json", True),
    ("llm_calls", "task_id, seq", "record_json", True),
    ("journal", "key", "output_json", True),
)


@dataclass(frozen=True, slots=True)
class ScrubReport:
    rows: int
    """Rows rewritten."""
    wal_truncated: bool
    """False when another connection's open read kept the WAL from being checkpointed and truncated."""


def scrub_task(path: Path | str, task_id: str, secrets: Iterable[str]) -> ScrubReport:
    """Rewrite every stored record of ``task_id`` with ``secrets`` redacted; then checkpoint and truncate the WAL."""
    redactor = Redactor.build(secrets)
    if not redactor.secrets:
        return ScrubReport(0, True)
    conn = open_connection(str(path), durable=True)
    try:
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = scrub_connection(conn, task_id, redactor)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return ScrubReport(rows, busy == 0)
    finally:
        conn.close()


def scrub_connection(conn: Any, task_id: str, redactor: Redactor) -> int:
    """Rewrite the rows of ``task_id`` inside the caller's write transaction (SQLite or PostgreSQL); the count."""
    return sum(_scrub_column(conn, table, key, column, is_json, task_id, redactor)
               for table, key, column, is_json in _COLUMNS)


def _scrub_column(conn: Any, table: str, key: str, column: str, is_json: bool, task_id: str,
                  redactor: Redactor) -> int:
    # Table and column names come from _COLUMNS above, never from input.
    found = conn.execute(f"SELECT {key}, {column} FROM {table} WHERE task_id = ? AND {column} IS NOT NULL",  # noqa: S608
                         (task_id,)).fetchall()
    where = " AND ".join(f"{k.strip()} = ?" for k in key.split(","))
    changed = 0
    for *ids, text in found:
        if is_json:
            if not redactor.needs_redaction(text):
                continue
            new = encode(decode(text), redactor, what=f"a {table} row of task {task_id!r}")
        else:
            new = redactor.redact_text(text)
        if new != text:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {where}", (new, *ids))  # noqa: S608
            changed += 1
    return changed
