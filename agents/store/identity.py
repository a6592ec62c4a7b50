"""Whether a database file is a tetrarch store, before anything is written to it.

Opening another program's SQLite file as a store used to add the store's tables to it and serve an empty task
list. Now a store is recognised first (``identify``): a file marked by the ``tetrarch_meta`` table, or one holding
only tables tetrarch creates (the store's and the memory layer's) is ours; a file with other tables is not, and
is refused whatever the command. An empty or missing file is a new store: commands that create one (``run``, an
``Orchestrator``) may, readers (``tasks``, ``ui``, ``trace``) may not, and never write a byte to it.

Example:
    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:")
    >>> identify(conn).kind
    <Found.EMPTY: 'empty'>
    >>> _ = conn.execute("CREATE TABLE invoices (id INTEGER)")
    >>> found = identify(conn)
    >>> found.kind, found.foreign
    (<Found.FOREIGN: 'foreign'>, ('invoices',))
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import Enum

__all__ = ["APPLICATION", "META_TABLE", "STORE_TABLES", "Found", "Identity", "identify", "mark"]

META_TABLE = "tetrarch_meta"
APPLICATION = "tetrarch"
"""``tetrarch_meta``'s ``application`` row: what marks a file as a tetrarch store."""

STORE_TABLES = frozenset({"tasks", "events", "checkpoints", "step_outputs", "journal", "journal_v2", "llm_calls",
                          "leases", "checkpoint_deltas", META_TABLE})
"""Every table the store's migrations create (``journal_v2`` lives only inside the v1 → v2 migration)."""
_MEMORY_PREFIXES = ("memory_", "doc_")
"""The memory layer's tables (``agents.memory``: sessions, turns, plan templates, the user's documents and their
full-text index with its shadow tables) share the store's file."""


class Found(Enum):
    EMPTY = "empty"
    """No store yet (no tables of the store's, perhaps the memory layer's): a command that creates may."""
    STORE = "store"
    FOREIGN = "foreign"


@dataclass(frozen=True, slots=True)
class Identity:
    kind: Found
    foreign: tuple[str, ...] = ()
    """The tables that make the file not ours (sorted)."""
    marked: bool = False
    """Whether ``tetrarch_meta`` says so (stores created before it existed are recognised by their tables)."""


def _ours(table: str) -> bool:
    return table in STORE_TABLES or table.startswith(_MEMORY_PREFIXES)


def identify(conn: sqlite3.Connection) -> Identity:
    """What the file behind ``conn`` holds; reads only. Raises ``sqlite3.DatabaseError`` when it is not SQLite."""
    # One read transaction: another process creating the store between two reads would show its tables at
    # version 0 (or version 2 without tables) and look like someone else's.
    own_transaction = not conn.in_transaction
    if own_transaction:
        conn.execute("BEGIN")
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                                             " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")}
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        app = conn.execute(f"SELECT value FROM {META_TABLE} WHERE key = 'application'").fetchone() \
            if META_TABLE in tables else None
    finally:
        if own_transaction and conn.in_transaction:
            conn.execute("ROLLBACK")  # it only read
    if app is not None and app[0] == APPLICATION:
        return Identity(Found.STORE, marked=True)
    foreign = tuple(sorted(t for t in tables if not _ours(t)))
    if foreign:
        return Identity(Found.FOREIGN, foreign)
    has_store_tables = bool(tables & STORE_TABLES)
    if version == 0:
        # The migrations set user_version in the transaction that creates the tables: store tables at version 0
        # were made by someone else under the same names.
        return Identity(Found.FOREIGN, tuple(sorted(tables & STORE_TABLES))) if has_store_tables \
            else Identity(Found.EMPTY)
    if "tasks" not in tables:  # another program's use of user_version
        return Identity(Found.FOREIGN, tuple(sorted(tables)) or (f"user_version {version}",))
    return Identity(Found.STORE)


def mark(conn: sqlite3.Connection) -> None:
    """Mark the store as tetrarch's (idempotent, safe when processes race; one write transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute(f"INSERT OR IGNORE INTO {META_TABLE}(key, value) VALUES ('application', ?)", (APPLICATION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
