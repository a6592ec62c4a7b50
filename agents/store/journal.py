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
from typing import Any, Protocol, assert_never

from agents.idempotency import ClaimReply, ClaimState, Fence, JournalEntry
from agents.store.codec import decode
from agents.store.fencing import Claimed, ClaimOutcome, Held, LeaseLost, Recorded

__all__ = ["DEFAULT_CLAIM_GRACE_S", "JournalBackend", "StoreJournal", "claim_reply", "task_id_of_key"]

DEFAULT_CLAIM_GRACE_S = 5.0
"""How long a newer runner waits for an older runner's unrecorded claim to be recorded before taking it over:
an old executor still finishing the call records its output in that time, and the new runner uses it."""


def task_id_of_key(key: str) -> str:
    """The task a key belongs to when keys look like ``"<task_id>:<hash>"``; otherwise the whole key."""
    return key.split(":", 1)[0]


class JournalBackend(Protocol):
    """The two blocking calls the journal needs (``agents.store.Store`` has them); a protocol, so this
    module does not import the store that uses it."""

    def journal_get(self, key: str) -> Any: ...

    def journal_put(self, key: str, task_id: str, output: Any) -> bool: ...

    def journal_claim(self, key: str, task_id: str, fence: Fence, grace_s: float) -> ClaimOutcome: ...

    def journal_record(self, key: str, fence: Fence, output: Any) -> bool: ...


def claim_reply(outcome: ClaimOutcome) -> ClaimReply:
    """The store's claim outcome as the journal contract's ``ClaimReply`` (what the executors act on)."""
    match outcome:
        case Claimed():
            return ClaimReply(ClaimState.CLAIMED)
        case Recorded(output_json=text):
            return ClaimReply(ClaimState.RECORDED, decode(text))
        case Held(generation=g, token=t, claimant=c):
            return ClaimReply(ClaimState.HELD, detail=f"held by {c} (generation {g}, dispatch {t})")
        case LeaseLost(generation=g, current=c):
            return ClaimReply(ClaimState.LEASE_LOST, detail=f"lease generation {g} was taken over by {c}")
        case _:
            assert_never(outcome)


class StoreJournal:
    """Async adapter; the blocking SQLite calls run in a worker thread so the event loop keeps going.

    ``put`` is exactly-once: a second put of the same key keeps the first output.
    """

    def __init__(self, store: JournalBackend, *, task_id_of: Callable[[str], str] = task_id_of_key,
                 grace_s: float = DEFAULT_CLAIM_GRACE_S) -> None:
        self._store = store
        self._grace_s = grace_s
        self._task_id_of = task_id_of

    async def get(self, key: str) -> JournalEntry | None:
        """The recorded entry (``.key``, ``.output``, ``.recorded_at``) or None."""
        record = await asyncio.to_thread(self._store.journal_get, key)
        if record is None:
            return None
        return JournalEntry(key=record.key, output=record.output, recorded_at=record.recorded_at)

    async def put(self, key: str, output: Any) -> None:
        await asyncio.to_thread(self._store.journal_put, key, self._task_id_of(key), output)

    async def claim(self, key: str, fence: Fence) -> ClaimReply:
        """Claim ``key`` before running its side effect (``agents.idempotency.ClaimingJournal``)."""
        outcome = await asyncio.to_thread(self._store.journal_claim, key, self._task_id_of(key), fence,
                                          self._grace_s)
        return claim_reply(outcome)

    async def record(self, key: str, fence: Fence, output: Any) -> bool:
        return await asyncio.to_thread(self._store.journal_record, key, fence, output)
