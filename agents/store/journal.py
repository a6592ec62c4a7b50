"""``StoreJournal``: the tools dispatcher's async ``IdempotencyJournal`` over the SQLite store.

Example:
    >>> import asyncio, tempfile, pathlib
    >>> from agents.store import Store
    >>> store = Store(pathlib.Path(tempfile.mkdtemp()) / "t.db")
    >>> journal = StoreJournal(store)
    >>> asyncio.run(journal.put("t1:abc", {"ok": True}))
    >>> asyncio.run(journal.get("t1:abc")).output
    {'ok': True}
    >>> store.close()
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["JournalBackend", "StoreJournal", "task_id_of_key"]


def task_id_of_key(key: str) -> str:
    """The task a key belongs to when keys look like ``"<task_id>:<hash>"``; otherwise the whole key."""
    return key.split(":", 1)[0]


def _entry_type() -> Callable[..., Any] | None:
    # agents.tools owns JournalEntry; imported lazily so the store does not depend on the tools package.
    try:
        from agents.tools.journal import JournalEntry
    except ImportError:
        return None
    return JournalEntry


class JournalBackend(Protocol):
    """The two blocking calls the journal needs (``agents.store.Store`` has them); a protocol, so this
    module does not import the store that uses it."""

    def journal_get(self, key: str) -> Any: ...

    def journal_put(self, key: str, task_id: str, output: Any) -> bool: ...


class StoreJournal:
    """Async adapter; the blocking SQLite calls run in a worker thread so the event loop keeps going.

    ``put`` is exactly-once: a second put of the same key keeps the first output.
    """

    def __init__(self, store: JournalBackend, *, task_id_of: Callable[[str], str] = task_id_of_key) -> None:
        self._store = store
        self._task_id_of = task_id_of

    async def get(self, key: str) -> Any:
        """The recorded entry (``.key``, ``.output``, ``.recorded_at``) or None."""
        record = await asyncio.to_thread(self._store.journal_get, key)
        if record is None:
            return None
        entry = _entry_type()
        if entry is None:
            return record
        return entry(key=record.key, output=record.output, recorded_at=record.recorded_at)

    async def put(self, key: str, output: Any) -> None:
        await asyncio.to_thread(self._store.journal_put, key, self._task_id_of(key), output)
