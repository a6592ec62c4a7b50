"""The idempotency journal: a write tool's output is recorded under a per-step key, and a retry or a
resume that finds the key returns the recorded output instead of running the side effect again."""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["ClaimReply", "ClaimState", "ClaimingJournal", "Fence", "IdempotencyJournal", "JournalEntry", "MemoryJournal",
           "idempotency_key"]


@dataclass(frozen=True, slots=True)
class JournalEntry:
    key: str
    output: Any
    recorded_at: float


@runtime_checkable
class IdempotencyJournal(Protocol):
    """Anything with these two coroutines: ``agents.store.StoreJournal`` (durable, SQLite) and
    ``MemoryJournal`` (tests, single process). ``get`` returns an object with ``.output`` or None."""

    async def get(self, key: str) -> Any: ...

    async def put(self, key: str, output: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Fence:
    """Who runs a side effect: the task lease ``generation`` its runner holds, a ``token`` that grows when the
    runner sends the same attempt again (its executor died), and a ``claimant`` naming this one call."""

    generation: int
    token: int
    claimant: str


class ClaimState(enum.Enum):
    CLAIMED = "claimed"
    """Run the side effect, then ``record`` its output."""
    RECORDED = "recorded"
    """It ran already: ``ClaimReply.output`` is its output."""
    HELD = "held"
    """Another call holds the claim and may still be running it: wait, then claim again."""
    LEASE_LOST = "lease_lost"
    """The runner no longer owns the task: run nothing."""


@dataclass(frozen=True, slots=True)
class ClaimReply:
    state: ClaimState
    output: Any = None
    detail: str = ""


@runtime_checkable
class ClaimingJournal(Protocol):
    """A journal that claims a key before the side effect (``agents.store.StoreJournal``, the Ray journal
    actor): of two live runners only one runs it, and a stale runner (its lease moved on) runs nothing."""

    async def claim(self, key: str, fence: Fence) -> ClaimReply: ...

    async def record(self, key: str, fence: Fence, output: Any) -> bool: ...


class MemoryJournal:
    """In-process journal; the first ``put`` of a key wins, like the durable one."""

    def __init__(self, clock: Any = time.time) -> None:
        self._entries: dict[str, JournalEntry] = {}
        self._lock = asyncio.Lock()
        self._clock = clock

    async def get(self, key: str) -> JournalEntry | None:
        return self._entries.get(key)

    async def put(self, key: str, output: Any) -> bool:
        async with self._lock:
            if key in self._entries:
                return False
            self._entries[key] = JournalEntry(key, output, self._clock())
            return True

    def __len__(self) -> int:
        return len(self._entries)

    def __getstate__(self) -> dict[str, Any]:
        return {"_entries": self._entries, "_clock": self._clock}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = asyncio.Lock()


def idempotency_key(task_id: str, step_id: int, tool_name: str, args: Any) -> str:
    """``"<task_id>:<sha256>"`` over the step id, the tool and its canonical (resolved) arguments.

    Per call, not per attempt and not per plan version: every retry, every resume and a replan that
    repeats the same call map to the same key, so the side effect applies once. A replan that changes
    the arguments is a different call and gets a new key.

    >>> idempotency_key("t1", 3, "write_file", {"path": "a"}) == idempotency_key("t1", 3, "write_file", {"path": "a"})
    True
    """
    canonical = json.dumps([step_id, tool_name, args], sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, default=str)
    return f"{task_id}:{hashlib.sha256(canonical.encode()).hexdigest()}"
