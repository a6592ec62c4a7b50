"""Where role actors go on a cluster: pure planning over a snapshot of the nodes (no Ray import).

``agents.cluster.actors`` turns these plans into Ray scheduling strategies; the node watcher calls
``plan_executors`` again whenever the set of alive nodes changes. Keeping the decisions here means every
rule (head excluded, custom resources respected, capacity per node, round-robin of replicas) is tested
without starting Ray.

Example:
    >>> nodes = [NodeView("h", True, {"CPU": 2}, is_head=True), NodeView("w1", True, {"CPU": 1, "exec": 2})]
    >>> plan_executors(nodes, home="h", request={"exec": 1}, per_node=3, existing={})
    ['w1', 'w1']
    >>> plan_roles(nodes, home="h", request={}, replicas=2)
    ['w1', 'w1']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LeastLoaded",
    "NodeView",
    "capacity",
    "nodes_from_ray",
    "plan_executors",
    "plan_roles",
    "worker_nodes",
]

HEAD_RESOURCE = "node:__internal_head__"


@dataclass(frozen=True, slots=True)
class NodeView:
    """What placement needs to know about one node."""

    node_id: str
    alive: bool
    resources: Mapping[str, float] = field(default_factory=dict)
    """The node's *total* resources: placement plans capacity, Ray tracks what is free."""
    is_head: bool = False
    address: str = ""


def nodes_from_ray(raw: Iterable[Mapping[str, Any]]) -> list[NodeView]:
    """``ray.nodes()`` entries → ``NodeView`` (dead nodes included, marked not alive)."""
    views = []
    for entry in raw:
        resources = {k: float(v) for k, v in dict(entry.get("Resources") or {}).items()}
        views.append(NodeView(node_id=str(entry["NodeID"]), alive=bool(entry.get("Alive")), resources=resources,
                              is_head=HEAD_RESOURCE in resources, address=str(entry.get("NodeManagerAddress", ""))))
    return views


def capacity(node: NodeView, request: Mapping[str, float]) -> int | None:
    """How many actors asking for ``request`` fit on ``node`` (None: no limit — the request is empty or
    only zero amounts). Our actors ask for ``num_cpus=0``, so only custom resources bound them."""
    bounds = []
    for name, amount in request.items():
        if amount <= 0:
            continue
        have = node.resources.get(name, 0.0)
        # Ray allows fractional resources to four decimals; round so 3 × 0.1 of 0.3 fits three times.
        bounds.append(math.floor(round(have / amount, 4)))
    return min(bounds) if bounds else None


def worker_nodes(nodes: Sequence[NodeView], home: str, request: Mapping[str, float]) -> list[NodeView]:
    """Alive nodes that can host at least one actor with ``request``, the Supervisor's node ("home") and
    the head excluded — unless nothing else fits (a one-machine Ray), then home/head are used too."""
    def fits(node: NodeView) -> bool:
        room = capacity(node, request)
        return node.alive and (room is None or room > 0)

    fitting = [n for n in nodes if fits(n)]
    workers = [n for n in fitting if n.node_id != home and not n.is_head]
    return sorted(workers or fitting, key=lambda n: n.node_id)


def plan_roles(nodes: Sequence[NodeView], home: str, request: Mapping[str, float], replicas: int) -> list[str | None]:
    """A node for each replica of a role: round-robin over the worker nodes that fit, within each node's
    capacity. ``None`` for a replica no node can take (Ray then queues it and ``ActorStartError`` says why)."""
    candidates = worker_nodes(nodes, home, request)
    left = {n.node_id: capacity(n, request) for n in candidates}
    plan: list[str | None] = []
    i = 0
    for _ in range(replicas):
        chosen = None
        for _ in range(len(candidates)):
            node = candidates[i % len(candidates)]
            i += 1
            room = left[node.node_id]
            if room is None or room > 0:
                chosen = node.node_id
                if room is not None:
                    left[node.node_id] = room - 1
                break
        plan.append(chosen)
    return plan


def plan_executors(nodes: Sequence[NodeView], home: str, request: Mapping[str, float], per_node: int,
                   existing: Mapping[str, int]) -> list[str]:
    """Node ids for the executors still missing so every worker node runs ``per_node`` of them (fewer if
    its custom resources hold fewer). ``existing`` counts executors already placed per node, so calling
    this again after a node joins plans only the newcomer's."""
    plan: list[str] = []
    for node in worker_nodes(nodes, home, request):
        room = capacity(node, request)
        want = per_node if room is None else min(per_node, room)
        plan.extend([node.node_id] * max(0, want - existing.get(node.node_id, 0)))
    return plan


class LeastLoaded:
    """Pick the replica with the fewest calls in flight; ties go round-robin (so idle replicas all get
    work instead of the first one taking every short call)."""

    def __init__(self, size: int = 0) -> None:
        self._inflight = [0] * size
        self._next = 0

    def __len__(self) -> int:
        return len(self._inflight)

    def grow(self, extra: int) -> None:
        self._inflight.extend([0] * extra)

    def acquire(self, avoid: frozenset[int] | set[int] = frozenset()) -> int:
        """The index to use next; ``avoid`` (e.g. replicas that just died) is skipped unless nothing else is left."""
        if not self._inflight:
            raise IndexError("no replicas to choose from")
        n = len(self._inflight)
        allowed = [i for i in range(n) if i not in avoid] or list(range(n))
        low = min(self._inflight[i] for i in allowed)
        for k in range(n):
            index = (self._next + k) % n
            if index in allowed and self._inflight[index] == low:
                self._next = index + 1
                self._inflight[index] += 1
                return index
        raise AssertionError("unreachable")

    def release(self, index: int) -> None:
        self._inflight[index] = max(0, self._inflight[index] - 1)

    def load(self) -> list[int]:
        return list(self._inflight)
