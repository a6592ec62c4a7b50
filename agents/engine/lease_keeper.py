"""Keeping the leases of the tasks a Supervisor runs live, and telling a live lease from a lapsed one.

A lease has no end of its own (every write is fenced by its generation, docs/reliability.md); what ``resume``
needs to know is whether a runner is still at work on the task, so that it does not take a running task over
silently and run its step in flight a second time. A Supervisor renews the leases of its running tasks every
third of ``LEASE_TTL_S``; a lease that was not renewed that long, or whose owner is a process of this host that
no longer exists, or that was revoked, has no runner, and ``resume`` takes it as before.

Example:
    >>> from agents.store.fencing import LeaseHolder
    >>> lease_runner(LeaseHolder(3, "elsewhere:1:ab", renewed_at=100.0), me="here:2:cd", now=110.0) is not None
    True
    >>> lease_runner(LeaseHolder(3, "elsewhere:1:ab", renewed_at=100.0), me="here:2:cd", now=140.0) is None
    True
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable

from agents.store import Store
from agents.store.fencing import LEASE_TTL_S, LeaseHolder

__all__ = ["LeaseKeeper", "lease_runner"]

log = logging.getLogger("tetrarch")

_RENEWING_HERE: set[str] = set()
"""The lease names of the Supervisors of this process whose keeper runs: one of this process that is not here
has stopped (shut down, or its event loop ended), whatever its lease says."""


def lease_runner(lease: LeaseHolder | None, *, me: str, now: float) -> LeaseHolder | None:
    """The lease when another runner holds it live, else None (nobody, this Supervisor, a revoked or lapsed
    lease, or a runner of this host whose process is gone)."""
    if lease is None or lease.owner == me or not lease.live(now):
        return None
    return None if _process_gone(lease.owner) else lease


def _process_gone(owner: str) -> bool:
    """A Supervisor's lease name is ``host:pid:nonce``: on this host, a pid that no longer runs is a runner that
    died (a killed driver), and waiting out its lease would only delay the resume that follows a crash."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return owner not in _RENEWING_HERE
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, owned by another user
        return False
    return _zombie(int(pid))


def _zombie(pid: int) -> bool:
    """A process that exited but was not reaped yet (a killed raylet's orphaned worker, before init reaps it):
    it still answers ``kill(pid, 0)`` but runs nothing."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            stat = file.read()
    except OSError:
        return False  # no /proc (not Linux): the pid answered, so it counts as running
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


class LeaseKeeper:
    """Renews ``owner``'s leases of the tasks ``running()`` names, every ``LEASE_TTL_S / 3`` seconds, on the loop
    that runs them (started from a coroutine; ``stop`` releases them, so the next resume needs no force)."""

    def __init__(self, store: Store, owner: str, running: Callable[[], list[str]], *,
                 period_s: float = LEASE_TTL_S / 3) -> None:
        self._store, self._owner, self._running, self._period_s = store, owner, running, period_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> LeaseKeeper:
        self._task = asyncio.get_running_loop().create_task(self._renew())
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        try:
            self._store.renew_leases(self._owner, [], release=True)
        except Exception:  # noqa: BLE001 - a store gone at shutdown: the leases lapse by themselves
            log.warning("could not release this Supervisor's task leases; they lapse in %gs", LEASE_TTL_S)

    async def _renew(self) -> None:
        _RENEWING_HERE.add(self._owner)
        try:
            while True:
                await asyncio.sleep(self._period_s)
                running = self._running()
                if running:
                    self._renew_now(running)
        finally:  # stopped, or its loop ended: its runners stopped with it
            _RENEWING_HERE.discard(self._owner)

    def _renew_now(self, running: list[str]) -> None:
        try:
            self._store.renew_leases(self._owner, running)
        except Exception:  # noqa: BLE001 - a store that failed once may answer next time; the writes are fenced
            log.warning("could not renew the leases of %d running task(s)", len(running), exc_info=True)
