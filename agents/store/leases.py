"""The store's lease and idempotency-journal calls (``agents.store.fencing`` holds their SQL): who may write a task,
and each side effect's output recorded once. A mixin of ``agents.store.Store``, which supplies the connections.

Example:
    >>> store.acquire_lease(task_id, owner="supervisor-0")                  # doctest: +SKIP
    2
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from agents.idempotency import Fence
from agents.store import fencing
from agents.store.backends import Connection
from agents.store.codec import decode, encode
from agents.store.fencing import ClaimOutcome
from agents.store.records import JournalRecord
from agents.store.redact import Redactor

__all__ = ["LeasesAndJournal"]


class LeasesAndJournal:
    """Leases (``acquire_lease``, ``renew_leases``, ``revoke_lease``…) and the journal (``journal_*``)."""

    _clock: Callable[[], float]
    _redactor: Redactor

    def _read(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def _write(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    @staticmethod
    def _require_task(conn: Connection, task_id: str) -> None:
        raise NotImplementedError

    def acquire_lease(self, task_id: str, owner: str = "") -> int:
        """Take the task over (resume, Supervisor restart): the new generation; older ones' writes are refused."""
        with self._write() as conn:
            self._require_task(conn, task_id)
            return fencing.acquire(conn, task_id, owner=owner, now=self._clock())

    def lease_holder(self, task_id: str) -> fencing.LeaseHolder | None:
        """Who holds the task's lease and until when it is live; None: nobody ever took it."""
        with self._read() as conn:
            return fencing.holder(conn, task_id)

    def renew_leases(self, owner: str, task_ids: list[str], *, release: bool = False) -> int:
        """Keep ``owner``'s leases among ``task_ids`` live (``fencing.LEASE_TTL_S``); ``release``: let all of
        ``owner``'s leases lapse now (its runner stopped them, so a resume needs no force)."""
        with self._write() as conn:
            if release:
                return fencing.release_owner(conn, owner)
            return fencing.renew(conn, owner, task_ids, now=self._clock())

    def leases_held(self, owner: str, task_ids: list[str]) -> set[str]:
        """Which of ``task_ids`` ``owner`` still holds (a cancel or a resume elsewhere took the others)."""
        with self._read() as conn:
            return fencing.held(conn, owner, task_ids)

    def revoke_lease(self, task_id: str, generation: int, reason: str) -> bool:
        """Fence out the runner holding ``generation`` (it lost its driver): its writes and claims are refused
        from now on, and a resume takes the task over as usual. False if a newer runner holds the task already."""
        with self._write() as conn:
            return fencing.revoke(conn, task_id, generation, owner=f"{fencing.REVOKED}{reason}", now=self._clock())

    def revoke_owner(self, owner: str, reason: str) -> list[str]:
        """``revoke_lease`` for every task ``owner`` (a Supervisor's lease name) holds; their ids."""
        with self._write() as conn:
            return fencing.revoke_owner(conn, owner, reason=f"{fencing.REVOKED}{reason}", now=self._clock())

    def journal_get(self, key: str) -> JournalRecord | None:
        with self._read() as conn:
            row = fencing.recorded(conn, key)
        return JournalRecord(key=row[0], task_id=row[1], output=decode(row[2]), recorded_at=row[3]) if row else None

    def journal_put(self, key: str, task_id: str, output: Any) -> bool:
        """Record a side effect's output once: True if recorded now, False if the key was already there."""
        text = encode(output, self._redactor, what=f"the journaled output for key {key!r}")
        with self._write() as conn:
            return fencing.put(conn, key, task_id, text, now=self._clock())

    def journal_claim(self, key: str, task_id: str, fence: Fence, grace_s: float) -> ClaimOutcome:
        """Claim a side effect before running it (one SQL statement; see ``agents.store.fencing``)."""
        with self._write() as conn:
            return fencing.claim(conn, key, task_id, fence, now=self._clock(), grace_s=grace_s)

    def journal_record(self, key: str, fence: Fence, output: Any) -> bool:
        """Record the output of a side effect claimed with ``fence``; False if the claim was taken over."""
        text = encode(output, self._redactor, what=f"the journaled output for key {key!r}")
        with self._write() as conn:
            return fencing.record(conn, key, fence, text, now=self._clock())
