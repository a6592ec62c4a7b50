"""Opening a store's SQLite file: create it only when asked to, and refuse a file that is not a store before a
single pragma or table is written to it (``agents.store.identity`` says what is ours).

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "typo.db"
    >>> open_store_file(path, create=False)
    Traceback (most recent call last):
    ...
    agents.store.errors.NoStoreError: no store at ... (the file does not exist); check the --store path ...
    >>> path.exists()
    False
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from agents.store.errors import NoStoreError, NotAStoreError, StoreOpenError
from agents.store.identity import Found, Identity, identify
from agents.store.schema import BUSY_TIMEOUT_MS, configure

__all__ = ["configure", "identify_or_refuse", "open_store_file", "why_not"]


def why_not(path: Path, exc: OSError) -> str:
    """Why ``path`` could not be created, in words that point at the cause (``exc`` alone may mislead)."""
    reason = exc.strerror or str(exc)
    blocker = next((p for p in path.parents if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        return f"{blocker} is a file, not a directory ({reason})"
    if isinstance(exc, FileNotFoundError) and path.parent.is_dir():
        # /proc/t.db: the directory exists, but its file system takes no new files; "no such file" alone misleads.
        return f"the directory {path.parent} does not let anything be created in it ({reason})"
    return reason


def open_store_file(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection to ``path`` with no pragma set yet. ``create``: make the file (and its directory) if missing,
    else a missing file is ``NoStoreError`` and none is made. Errors name ``path``, the file the user chose."""
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # An empty file is an empty SQLite database; made here, the OS says why it cannot be (SQLite would not).
            # Append mode leaves an existing file (perhaps another program's) untouched, its mtime too.
            path.open("ab").close()
        except OSError as exc:
            raise StoreOpenError(str(path), why_not(path, exc)) from None
    elif not path.is_file():
        raise NoStoreError(str(path), "the file does not exist" if not path.exists() else "it is not a file")
    # mode=rw: SQLite itself never creates the file (a reader racing a delete would otherwise make an empty one).
    uri = f"file:{quote(str(path))}?mode=rw"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreOpenError(str(path), str(exc)) from None
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def identify_or_refuse(conn: sqlite3.Connection, path: str, *, create: bool) -> Identity:
    """What ``conn``'s file holds, when it may be used as a store: ``NotAStoreError`` for another program's
    database (or a file that is not SQLite), ``NoStoreError`` for an empty one unless ``create``."""
    try:
        found = identify(conn)
    except sqlite3.DatabaseError as exc:
        raise NotAStoreError(path, f"it is not an SQLite database ({exc})") from None
    if found.kind is Found.FOREIGN:
        names = ", ".join(found.foreign[:8]) + (", …" if len(found.foreign) > 8 else "")
        raise NotAStoreError(path, f"it holds tables tetrarch did not create ({names})")
    if found.kind is Found.EMPTY and not create:
        raise NoStoreError(path, "the file holds no task store: it is empty")
    return found
