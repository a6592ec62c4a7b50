"""Keeping the leases of the tasks a Supervisor runs live, and telling a live lease from a lapsed one.

A lease has no end of its own (every write is fenced by its generation, docs/reliability.md); what ``resume``
needs to know is whether a runner is still at work on the task, so that it does not take a running task over
silently and run its step in flight a second time. A Supervisor renews the leases of its running tasks every
third of ``LEASE_TTL_S``; a lease that was not renewed that long, or whose owner is a process of this host that
no longer exists (or, for a runner that lives with its parent, a Ray worker, whose parent is no longer the one it
had: its raylet died and it only lingers until it notices), or that was revoked, has no runner, and ``resume``
takes it as before.

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
import uuid
from collections.abc import Callable

from agents.store import Store
from agents.store.fencing import LEASE_TTL_S, LeaseHolder

__all__ = ["LeaseKeeper", "lease_name", "lease_runner"]

log = logging.getLogger("tetrarch")

_RENEWING_HERE: set[str] = set()
"""The lease names of the Supervisors of this process whose keeper runs: one of this process that is not here
has stopped (shut down, or its event loop ended), whatever its lease says."""


def lease_name(lives_with_parent: bool = False) -> str:
    """A runner's lease name, ``host:pid:nonce``, and ``:ppid`` for a runner that lives only as long as the
    process that started it (a Ray worker and its raylet)."""
    name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    return f"{name}:{os.getppid()}" if lives_with_parent else name


def lease_runner(lease: LeaseHolder | None, *, me: str, now: float) -> LeaseHolder | None:
    """The lease when another runner holds it live, else None (nobody, this Supervisor, a revoked or lapsed
    lease, or a runner of this host whose process is gone)."""
    if lease is None or lease.owner == me or not lease.live(now):
        return None
    return None if _process_gone(lease.owner) else lease


def _process_gone(owner: str) -> bool:
    """A Supervisor's lease name is ``host:pid:nonce``: on this host, a pid that no longer runs is a runner that
    died (a killed driver), and waiting out its lease would only delay the resume that follows a crash."""
    host, pid, _, parent = (owner.split(":") + ["", "", ""])[:4]
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
    state = _proc_state(int(pid))
    if state is None:
        return False  # no /proc (not Linux): the pid answered, so it counts as running
    status, ppid = state
    # A zombie exited but was not reaped yet; an orphan whose parent was its raylet has lost its node.
    return status in ("Z", "X") or (parent.isdigit() and ppid != int(parent))


def _proc_state(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent pid, from ``/proc/<pid>/stat`` (None without /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            fields = file.read().rpartition(")")[2].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


WATCH_S = 0.5
"""How often a Supervisor looks whether another runner took one of its running tasks over (a cancel from
another process, a forced resume): such a run is fenced out at once, and stops within this long."""


class LeaseKeeper:
    """Renews ``owner``'s leases of the tasks ``running()`` names, every ``LEASE_TTL_S / 3`` seconds, on the loop
    that runs them (started from a coroutine; ``stop`` releases them, so the next resume needs no force).
    Every ``watch_s`` it calls ``on_lost(task_id)`` for each of them whose lease ``owner`` no longer holds."""

    def __init__(self, store: Store, owner: str, running: Callable[[], list[str]], *,
                 period_s: float = LEASE_TTL_S / 3, on_lost: Callable[[str], None] | None = None,
                 watch_s: float = WATCH_S) -> None:
        self._store, self._owner, self._running, self._period_s = store, owner, running, period_s
        self._on_lost, self._watch_s = on_lost, watch_s
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> LeaseKeeper:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._renew())]
        if self._on_lost is not None:
            self._tasks.append(loop.create_task(self._watch(self._on_lost)))
        return self

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
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

    async def _watch(self, on_lost: Callable[[str], None]) -> None:
        while True:
            await asyncio.sleep(self._watch_s)
            running = self._running()
            if not running:
                continue
            try:
                held = self._store.leases_held(self._owner, running)
            except Exception:  # noqa: BLE001 - asked again next time; the writes are fenced meanwhile
                log.warning("could not read the leases of %d running task(s)", len(running), exc_info=True)
                continue
            for task_id in running:
                if task_id not in held:
                    on_lost(task_id)

    def _renew_now(self, running: list[str]) -> None:
        try:
            self._store.renew_leases(self._owner, running)
        except Exception:  # noqa: BLE001 - a store that failed once may answer next time; the writes are fenced
            log.warning("could not renew the leases of %d running task(s)", len(running), exc_info=True)
