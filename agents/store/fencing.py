"""Ownership of a task with fencing, and the idempotency journal's claim-before-call protocol (SQL over a
connection inside the caller's transaction; ``Store`` wraps these in its methods).

A task is run by one runner at a time. ``acquire`` bumps the task's lease generation and returns it; every
later write names the generation it holds, and ``check`` refuses it once a newer runner took over, so a
stale runner (a killed driver's surviving workers, a restarted Supervisor's predecessor, a partitioned node)
can neither checkpoint nor run a side effect, and stops itself.

A side effect is claimed before it runs: ``claim`` is one SQL statement that inserts the claim, or takes over
a claim nobody can still be completing, and only if the claimant's generation still holds the lease. Of two
live runners only one gets the claim; the other waits for the recorded output.

Example:
    >>> import sqlite3
    >>> from agents.store.schema import migrate
    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> _ = migrate(conn, path=":memory:")
    >>> _ = conn.execute("INSERT INTO tasks(task_id, task, status, created_at, updated_at, config_json)"
    ...                  " VALUES ('t', 'x', 'running', 0, 0, '{}')")
    >>> acquire(conn, "t", owner="a", now=0.0), acquire(conn, "t", owner="b", now=1.0)
    (1, 2)
    >>> claim(conn, "t:k", "t", Fence(2, 0, "exec-0"), now=2.0, grace_s=5.0)
    Claimed()
    >>> claim(conn, "t:k", "t", Fence(1, 0, "old"), now=2.0, grace_s=5.0)
    LeaseLost(generation=1, current=2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.idempotency import Fence  # the contract shared with the executors that send it
from agents.store.dialect import LOCK_ROW

__all__ = [
    "ClaimOutcome",
    "Claimed",
    "Held",
    "LEASE_TTL_S",
    "LeaseHolder",
    "LeaseLost",
    "Recorded",
    "acquire",
    "check",
    "claim",
    "current",
    "held",
    "holder",
    "put",
    "record",
    "recorded",
    "release_owner",
    "renew",
    "revoke",
    "revoke_owner",
]

LEASE_TTL_S = 30.0
"""How long a lease counts as live after its runner last renewed it. A runner renews the leases of the tasks it
runs every third of this (``agents.engine.lease_keeper``), so only a runner that is gone (or whose loop stalled
this long) lets its lease lapse; ``orch.resume`` refuses a live lease unless forced."""

REVOKED = "revoked: "
"""How the owner of a revoked lease begins (``Store.revoke_lease``): a reason, not a runner, so never live."""


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """Who holds a task's lease, and when its runner last renewed it (the ``acquired_at`` column: taking the lease
    and renewing it both set it)."""

    generation: int
    owner: str
    renewed_at: float

    @property
    def until(self) -> float:
        """When the lease lapses unless its runner renews it."""
        return self.renewed_at + LEASE_TTL_S

    def live(self, now: float) -> bool:
        """Held by a runner that renewed it within ``LEASE_TTL_S`` (a revoked lease has no runner)."""
        return not self.owner.startswith(REVOKED) and bool(self.owner) and now < self.until


@dataclass(frozen=True, slots=True)
class Claimed:
    """The caller holds the claim: run the side effect, then ``record`` its output."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """The side effect ran already; this is its output."""

    output_json: str


@dataclass(frozen=True, slots=True)
class Held:
    """Another call holds the claim and may still be running the side effect: wait for its record."""

    generation: int
    token: int
    claimant: str


@dataclass(frozen=True, slots=True)
class LeaseLost:
    """The caller's runner no longer owns the task: it must not run the side effect, and should stop."""

    generation: int
    current: int


ClaimOutcome = Claimed | Recorded | Held | LeaseLost


def current(conn: Any, task_id: str) -> int | None:
    """The task's lease generation, or None when no runner ever took it (tasks written without fencing)."""
    row = conn.execute(f"SELECT generation FROM leases WHERE task_id = ? {LOCK_ROW}", (task_id,)).fetchone()
    return None if row is None else int(row[0])


def acquire(conn: Any, task_id: str, *, owner: str, now: float) -> int:
    """Take the task over: generation + 1 (1 for a new task). Every older generation's writes fail from now on."""
    row = conn.execute("INSERT INTO leases(task_id, generation, owner, acquired_at) VALUES (?, 1, ?, ?)"
                       " ON CONFLICT(task_id) DO UPDATE SET generation = leases.generation + 1, owner = excluded.owner,"
                       " acquired_at = excluded.acquired_at RETURNING generation", (task_id, owner, now)).fetchone()
    return int(row[0])


def holder(conn: Any, task_id: str) -> LeaseHolder | None:
    """The task's lease as it stands, or None when no runner ever took it."""
    row = conn.execute("SELECT generation, owner, acquired_at FROM leases WHERE task_id = ?", (task_id,)).fetchone()
    return None if row is None else LeaseHolder(int(row[0]), str(row[1]), float(row[2]))


def renew(conn: Any, owner: str, task_ids: list[str], *, now: float) -> int:
    """Mark the leases ``owner`` still holds among ``task_ids`` as live at ``now``; how many it holds. A lease
    another runner took over has another owner and is left alone."""
    if not task_ids:
        return 0
    marks = ", ".join("?" for _ in task_ids)
    cursor = conn.execute(f"UPDATE leases SET acquired_at = ? WHERE owner = ? AND task_id IN ({marks})",
                          (now, owner, *task_ids))
    return int(cursor.rowcount)


def held(conn: Any, owner: str, task_ids: list[str]) -> set[str]:
    """Which of ``task_ids`` ``owner`` still holds (another runner took the others over, or their leases were
    revoked): a read, cheap enough to ask twice a second."""
    if not task_ids:
        return set()
    marks = ", ".join("?" for _ in task_ids)
    rows = conn.execute(f"SELECT task_id FROM leases WHERE owner = ? AND task_id IN ({marks})",
                        (owner, *task_ids)).fetchall()
    return {r[0] for r in rows}


def release_owner(conn: Any, owner: str) -> int:
    """Let every lease ``owner`` holds lapse at once (its runner stops: a resume needs no force), keeping the
    generation, so nothing is fenced that was not already stopped."""
    cursor = conn.execute("UPDATE leases SET acquired_at = 0 WHERE owner = ?", (owner,))
    return int(cursor.rowcount)


def revoke(conn: Any, task_id: str, generation: int, *, owner: str, now: float) -> bool:
    """Fence out ``generation`` without a new runner taking over (its runner lost its driver): generation + 1,
    owned by ``owner`` (a reason, not a runner). False when a newer generation holds the lease already."""
    cursor = conn.execute("UPDATE leases SET generation = generation + 1, owner = ?, acquired_at = ?"
                          " WHERE task_id = ? AND generation = ?", (owner, now, task_id, generation))
    return cursor.rowcount == 1


def revoke_owner(conn: Any, owner: str, *, reason: str, now: float) -> list[str]:
    """``revoke`` every lease ``owner`` holds; the task ids."""
    rows = conn.execute("UPDATE leases SET generation = generation + 1, owner = ?, acquired_at = ? WHERE owner = ?"
                        " RETURNING task_id", (reason, now, owner)).fetchall()
    return sorted(r[0] for r in rows)


def check(conn: Any, task_id: str, generation: int) -> int | None:
    """None if ``generation`` holds the lease (or the task has none), else the current generation."""
    found = current(conn, task_id)
    return None if found is None or found == generation else found


# One statement: the INSERT's SELECT yields a row only while the claimant's generation holds the lease, so a
# stale runner neither inserts nor takes over. An existing claim is taken over only when it has no output yet
# and either (a) the same runner sent the attempt again (higher token: its executor died), or (b) it belongs to
# an older generation and is older than the grace period — an older runner's call still in flight gets that
# long to record its output, which the new runner then uses instead of running the side effect again.
_CLAIM = """
INSERT INTO journal(key, task_id, generation, token, claimant, claimed_at)
SELECT :key, :task_id, :generation, :token, :claimant, :now
WHERE COALESCE((SELECT generation FROM leases WHERE task_id = :task_id /*FOR SHARE*/), :generation) = :generation
ON CONFLICT(key) DO UPDATE SET generation = excluded.generation, token = excluded.token,
    claimant = excluded.claimant, claimed_at = excluded.claimed_at
WHERE journal.output_json IS NULL AND (
    (journal.generation = excluded.generation AND journal.token < excluded.token)
    OR (journal.generation < excluded.generation AND COALESCE(journal.claimed_at, 0) <= :now - :grace_s))
"""


def claim(conn: Any, key: str, task_id: str, fence: Fence, *, now: float,
          grace_s: float) -> ClaimOutcome:
    """Claim ``key`` for ``fence`` (see the module docstring). Call inside one write transaction."""
    cursor = conn.execute(_CLAIM, {"key": key, "task_id": task_id, "generation": fence.generation,
                                   "token": fence.token, "claimant": fence.claimant, "now": now,
                                   "grace_s": grace_s})
    if cursor.rowcount == 1:
        return Claimed()
    row = conn.execute("SELECT output_json, generation, token, claimant FROM journal WHERE key = ?",
                       (key,)).fetchone()
    if row is not None and row[0] is not None:
        return Recorded(row[0])  # a stale runner may still read a recorded output: it runs nothing
    lost = check(conn, task_id, fence.generation)
    if lost is not None:
        return LeaseLost(fence.generation, lost)
    assert row is not None, "the claim statement neither inserted nor found the row"
    if (row[1], row[2], row[3]) == (fence.generation, fence.token, fence.claimant):
        return Claimed()  # our own claim (a retried call of the same dispatch)
    return Held(int(row[1]), int(row[2]), str(row[3]))


def record(conn: Any, key: str, fence: Fence, output_json: str, *, now: float) -> bool:
    """Store the output of a claimed side effect. Allowed after the lease moved on (the effect happened; its
    record keeps a newer runner from repeating it), refused once another call took the claim over."""
    cursor = conn.execute("UPDATE journal SET output_json = ?, recorded_at = ? WHERE key = ? AND generation = ?"
                          " AND token = ? AND claimant = ? AND output_json IS NULL",
                          (output_json, now, key, fence.generation, fence.token, fence.claimant))
    return cursor.rowcount == 1


def recorded(conn: Any, key: str) -> tuple[str, str, str, float] | None:
    """The journal's recorded row for ``key`` (key, task_id, output_json, recorded_at); an unrecorded claim is
    None."""
    return conn.execute("SELECT key, task_id, output_json, recorded_at FROM journal WHERE key = ?"
                        " AND output_json IS NOT NULL", (key,)).fetchone()


def put(conn: Any, key: str, task_id: str, output_json: str, *, now: float) -> bool:
    """Record a side effect's output once, without a claim: True if recorded now. An unrecorded claim (its
    claimant died before recording) counts as absent."""
    cursor = conn.execute("INSERT INTO journal(key, task_id, output_json, recorded_at) VALUES (?, ?, ?, ?)"
                          " ON CONFLICT(key) DO UPDATE SET output_json = excluded.output_json,"
                          " recorded_at = excluded.recorded_at WHERE journal.output_json IS NULL",
                          (key, task_id, output_json, now))
    return cursor.rowcount == 1
