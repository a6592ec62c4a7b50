"""One SQL text for both backends: the store writes its statements in SQLite's spelling (``?`` and ``:name``
parameters, upserts, ``RETURNING``) and ``to_postgres`` rewrites them for psycopg once per statement.

The subset the store uses is the one both databases share (``INSERT … ON CONFLICT … DO UPDATE`` with the target
table's columns qualified by its name, ``COALESCE``, ``RETURNING``), plus one marker: ``/*FOR SHARE*/`` after a
read of a lease row. SQLite ignores it (a write transaction there holds the whole database's write lock from its
first statement); PostgreSQL locks the row, so a takeover (an ``UPDATE`` of the same row) waits for the write
that checked the old generation to commit, and the check and the write are one step for every other runner.

Example:
    >>> to_postgres("SELECT x FROM t WHERE a = ? AND b = :b /*FOR SHARE*/")
    'SELECT x FROM t WHERE a = %s AND b = %(b)s FOR SHARE'
    >>> to_postgres("SELECT '50%', ':not_a_param ?' FROM t WHERE k = ?")
    "SELECT '50%%', ':not_a_param ?' FROM t WHERE k = %s"
"""

from __future__ import annotations

import functools
import re
from typing import Literal

__all__ = ["LOCK_ROW", "BackendKind", "is_postgres_url", "to_postgres"]

BackendKind = Literal["sqlite", "postgresql"]

LOCK_ROW = "/*FOR SHARE*/"
"""Appended to a lease read inside a write: a row lock on PostgreSQL, a comment on SQLite."""

# A quoted literal (kept whole), a :name parameter, a ? parameter, or a percent sign.
_TOKEN = re.compile(r"'(?:[^']|'')*'|(?<!:):([A-Za-z_]\w*)|\?|%")


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` names a PostgreSQL server (``postgresql://`` or ``postgres://``) rather than a file."""
    return isinstance(value, str) and value.startswith(("postgresql://", "postgres://"))


@functools.lru_cache(maxsize=512)
def to_postgres(sql: str) -> str:
    """``sql`` in psycopg's parameter style (``%s`` / ``%(name)s``, literal ``%`` doubled) with the lock marker."""

    def swap(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("'"):
            return text.replace("%", "%%")
        if match.group(1) is not None:
            return f"%({match.group(1)})s"
        return "%s" if text == "?" else "%%"

    return _TOKEN.sub(swap, sql).replace(LOCK_ROW, "FOR SHARE")
