"""The idempotency journal's contract between the executors that run side effects (``agents.tools``) and the
store that records them (``agents.store``): the key of one call, the journal's entry, the fence a call claims
with and the claim's reply. A leaf module (it imports nothing of the project), so both sides share one
definition without either importing the other.

    >>> fence = Fence(generation=2, token=0, claimant="executor-0:ab12")
    >>> ClaimReply(ClaimState.HELD, detail=f"held by {fence.claimant}").state.value
    'held'
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["ClaimReply", "ClaimState", "ClaimingJournal", "Fence", "IdempotencyJournal", "JournalEntry",
           "idempotency_key"]


@dataclass(frozen=True, slots=True)
class JournalEntry:
    key: str
    output: Any
    recorded_at: float


@runtime_checkable
class IdempotencyJournal(Protocol):
    """Anything with these two coroutines: ``agents.store.StoreJournal`` (durable, SQLite) and
    ``agents.tools.MemoryJournal`` (tests, single process). ``get`` returns an object with ``.output`` or None."""

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
