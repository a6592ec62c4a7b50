"""Supervisor shards (``RuntimeConfig(supervisors=N)``): which shard a task belongs to, and the shards' names.

The shard map is a function, not a table: a task belongs to shard ``blake2b(task_id) mod N``, and shard ``k`` is
the named actor ``supervisor-<instance>`` (k = 0) or ``supervisor-<instance>-s<k>`` in the Orchestrator's
namespace. A driver learns the map from two values it already has, the Orchestrator's instance id and N: it holds
the shards' handles, and any other process finds a shard with ``ray.get_actor(name, namespace)``. Nothing has
to be kept in sync, and a restarted shard (same name, same index) owns the same tasks.

A shard restarted by Ray (its actor died, or its node: it comes back on another node) resumes the unfinished
tasks of its own shard from the store, taking each one's lease; a stale runner of the dead shard can write
nothing after that. Tasks of other shards are left to them.

Example:
    >>> [shard_of(t, 4) for t in ("a1", "b2", "c3", "d4")] == [shard_of(t, 4) for t in ("a1", "b2", "c3", "d4")]
    True
    >>> shard_of("anything", 1), shard_names("ab12", 3)
    (0, ['supervisor-ab12', 'supervisor-ab12-s1', 'supervisor-ab12-s2'])
"""

from __future__ import annotations

import hashlib

__all__ = ["shard_name", "shard_names", "shard_of"]


def shard_of(task_id: str, shards: int) -> int:
    """The shard owning ``task_id``: stable across processes and Python versions (not ``hash()``, salted)."""
    if shards <= 1:
        return 0
    digest = hashlib.blake2b(task_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def shard_name(instance: str, shard: int) -> str:
    return f"supervisor-{instance}" if shard == 0 else f"supervisor-{instance}-s{shard}"


def shard_names(instance: str, shards: int) -> list[str]:
    return [shard_name(instance, k) for k in range(shards)]
