"""Graph algorithms: cycles, levels, and the critical path against brute force."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dag import CycleError, build_graph, critical_path, find_cycle, topological_levels
from support.tiers import examples


def test_build_graph_has_an_edge_from_each_dependency_and_keeps_unknown_ids():
    g = build_graph({1: [], 2: [1], 3: [1, 9]})
    assert sorted(g.edges) == [(1, 2), (1, 3), (9, 3)]
    assert sorted(g.nodes) == [1, 2, 3, 9]


def test_find_cycle():
    assert find_cycle({1: [], 2: [1], 3: [2]}) is None
    cycle = find_cycle({1: [3], 2: [1], 3: [2], 4: []})
    assert cycle is not None and sorted(cycle) == [1, 2, 3]
    deps = {1: [3], 2: [1], 3: [2]}
    for prev, nxt in zip(cycle, cycle[1:] + cycle[:1]):
        assert prev in deps[nxt]  # each step depends on the one before it
    assert find_cycle({5: [5]}) == [5]


def test_topological_levels():
    assert topological_levels({4: [2, 3], 3: [1], 2: [1], 1: [], 5: [1, 4], 6: []}) == [[1, 6], [2, 3], [4], [5]]
    assert topological_levels({}) == []


def test_levels_and_critical_path_reject_cycles():
    with pytest.raises(CycleError, match="form a dependency cycle"):
        topological_levels({1: [2], 2: [1]})
    with pytest.raises(CycleError) as info:
        critical_path({1: [2], 2: [1]}, {})
    assert sorted(info.value.cycle) == [1, 2]


def test_critical_path_examples():
    assert critical_path({}, {}) == (0.0, [])
    assert critical_path({1: []}, {1: 2.5}) == (2.5, [1])
    deps = {1: [], 2: [1], 3: [1], 4: [2, 3]}
    assert critical_path(deps, {1: 1, 2: 5, 3: 2, 4: 1}) == (7.0, [1, 2, 4])
    assert critical_path(deps, {1: 1, 2: 1, 3: 2, 4: 1}) == (4.0, [1, 3, 4])
    assert critical_path(deps, {2: 3.0}) == (3.0, [1, 2, 4])  # missing durations count as 0


def _brute_force(deps: dict[int, list[int]], durations: dict[int, float]) -> float:
    """Longest path by enumerating every chain from every step."""
    dependents: dict[int, list[int]] = {i: [] for i in deps}
    for i, ds in deps.items():
        for d in ds:
            dependents[d].append(i)

    def longest_from(node: int) -> float:
        return durations[node] + max((longest_from(n) for n in dependents[node]), default=0.0)

    return max((longest_from(i) for i in deps), default=0.0)


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(n=st.integers(0, 9), seed=st.integers(0, 2**32))
def test_critical_path_matches_brute_force(n, seed):
    rng = random.Random(seed)
    deps = {i: sorted(rng.sample(range(1, i), rng.randint(0, i - 1))) for i in range(1, n + 1)}
    durations = {i: rng.choice([0.0, 0.5, 1.0, rng.uniform(0, 10)]) for i in deps}
    length, path = critical_path(deps, durations)
    assert length == pytest.approx(_brute_force(deps, durations))
    assert sum(durations[i] for i in path) == pytest.approx(length)
    for prev, nxt in itertools.pairwise(path):
        assert prev in deps[nxt], f"{path} is not a dependency chain"
    if path:
        assert not deps[path[0]], "the path starts at a step with no dependencies"
        assert not any(path[-1] in ds for ds in deps.values()), "the path ends at a step nothing depends on"
    levels = topological_levels(deps)
    assert sorted(i for level in levels for i in level) == list(deps)
    level_of = {i: k for k, level in enumerate(levels) for i in level}
    for i, ds in deps.items():
        assert level_of[i] == (max((level_of[d] for d in ds), default=-1) + 1)
