"""The idempotency journal: a write tool's output is recorded under a per-step key, and a retry or a
resume that finds the key returns the recorded output instead of running the side effect again.

The contract (keys, entries, fences, claims) lives in ``agents.idempotency``, shared with the store; this module
holds the in-process journal."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agents.idempotency import JournalEntry

__all__ = ["MemoryJournal"]


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
