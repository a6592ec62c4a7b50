"""Group commit: the batches every running task wrote in one event-loop tick, committed in one transaction.

Each ``StoreSink`` already coalesces one task's writes of a tick into one batch; with hundreds of tasks in
flight a Supervisor still paid one write transaction per task per tick (six for a one-step task). The committer
takes every sink that has a batch waiting at the end of the tick and hands them to ``Store.write_batches``: one
transaction, each batch fenced by its own lease generation and checked before any of it is written, so a
runner that lost its task is refused alone and the others commit.

A sink that must write *now* (before it reads the store) still flushes itself: its batch is taken then, and the
committer finds nothing left to take for it. Take and write happen in one synchronous call, so no sink's later
batch can overtake an earlier one.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any, Protocol

from agents.store import Store, TaskBatch

__all__ = ["GroupCommit", "GroupMember", "group_commit"]


class GroupMember(Protocol):
    def take(self) -> tuple[TaskBatch, Any] | None:
        """The batch waiting to be written and what the member does after it (its events to publish...); None
        when there is none (flushed already)."""

    def written(self, after: Any, error: Exception | None) -> None:
        """After the commit: publish the events ``take`` returned with the batch, or stop writing on ``error``."""


class GroupCommit:
    """One per store and event loop (``group_commit``)."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self._store, self._loop = store, loop
        self._waiting: list[GroupMember] = []

    def serves(self, store: Store, loop: asyncio.AbstractEventLoop) -> bool:
        """This is the committer of ``store`` on ``loop``."""
        return self._store is store and self._loop is loop

    def add(self, member: GroupMember) -> None:
        """Write ``member``'s batch at the end of this tick, with every other batch waiting then."""
        if not self._waiting:
            self._loop.call_soon(self.commit)
        self._waiting.append(member)

    def commit(self) -> None:
        members, self._waiting = self._waiting, []
        taken = [(m, t) for m in members if (t := m.take()) is not None]
        if not taken:
            return
        try:
            errors = self._store.write_batches([batch for _, (batch, _) in taken])
        except Exception as exc:  # noqa: BLE001 - the transaction failed: nothing was written, every runner is told
            errors = [exc] * len(taken)
        for (member, (_, after)), error in zip(taken, errors):
            member.written(after, error)


_COMMITTERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, GroupCommit]] = \
    weakref.WeakKeyDictionary()


def group_commit(store: Store, loop: asyncio.AbstractEventLoop) -> GroupCommit:
    """The committer of ``store`` on ``loop`` (made on first use; gone with the loop)."""
    per_store = _COMMITTERS.setdefault(loop, {})
    committer = per_store.get(id(store))
    if committer is None or not committer.serves(store, loop):
        committer = per_store[id(store)] = GroupCommit(store, loop)
    return committer

