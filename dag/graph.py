"""Whole-plan graph algorithms on networkx: cycles, levels, the critical path.

``deps`` maps each step id to the ids it depends on; an id that is only named as a dependency is a node too.
Edges run from a dependency to its dependent (the direction data flows).

Example:
    >>> deps = {1: [], 2: [1], 3: [1], 4: [2, 3]}
    >>> topological_levels(deps)
    [[1], [2, 3], [4]]
    >>> critical_path(deps, {1: 1.0, 2: 5.0, 3: 2.0, 4: 1.0})
    (7.0, [1, 2, 4])
    >>> find_cycle({1: [2], 2: [1]}) is not None
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import networkx as nx

from dag.errors import CycleError

__all__ = ["build_graph", "critical_path", "find_cycle", "topological_levels"]


def build_graph(deps: Mapping[int, Iterable[int]]) -> nx.DiGraph:
    """A DiGraph with an edge ``dep → step`` for every dependency."""
    graph = nx.DiGraph()
    for step, step_deps in deps.items():
        graph.add_node(step)
        graph.add_edges_from((d, step) for d in step_deps)
    return graph


def find_cycle(deps: Mapping[int, Iterable[int]]) -> list[int] | None:
    """A cycle's step ids in dependency order (each depends on the previous one, the first on the last)."""
    graph = build_graph(deps)
    try:
        edges = nx.find_cycle(graph, source=sorted(graph.nodes))
    except nx.NetworkXNoCycle:
        return None
    return [u for u, _ in edges]


def _checked(deps: Mapping[int, Iterable[int]]) -> nx.DiGraph:
    graph = build_graph(deps)
    if not nx.is_directed_acyclic_graph(graph):
        raise CycleError(tuple(find_cycle(deps) or ()))
    return graph


def topological_levels(deps: Mapping[int, Iterable[int]]) -> list[list[int]]:
    """Steps grouped by their longest chain of dependencies (level 0: no dependencies), ids sorted.

    All steps of one level could run in parallel. Raises CycleError if the plan is not a DAG.
    """
    return [sorted(level) for level in nx.topological_generations(_checked(deps))]


def critical_path(deps: Mapping[int, Iterable[int]], durations: Mapping[int, float]) -> tuple[float, list[int]]:
    """The longest chain by total duration, and its steps from a first step (no dependencies) to a last one.

    A step without a duration counts as 0 (e.g. one that never ran). No schedule can finish the plan faster
    than this length, whatever the parallelism. Ties go to the chain with the smaller ids. Raises CycleError
    if the plan is not a DAG.
    """
    graph = _checked(deps)
    best: dict[int, tuple[float, int | None]] = {}  # step -> (longest finish time, predecessor on that chain)
    for node in nx.lexicographical_topological_sort(graph):
        preds = list(graph.predecessors(node))
        via = min(preds, key=lambda p: (-best[p][0], p)) if preds else None
        start = best[via][0] if via is not None else 0.0
        best[node] = (start + float(durations.get(node, 0.0)), via)
    if not best:
        return 0.0, []
    # Some chain ending at a step nothing depends on is always longest: ending there (rather than at a
    # tie with zero-length steps after it) gives the full chain from a first step to a last one.
    end = min((n for n in best if graph.out_degree(n) == 0), key=lambda n: (-best[n][0], n))
    path = [end]
    while (prev := best[path[-1]][1]) is not None:
        path.append(prev)
    return best[end][0], path[::-1]
