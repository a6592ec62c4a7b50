"""Placement planning without Ray: which node each role replica and executor goes to."""

from __future__ import annotations

import pytest

from agents.cluster.placement import (
    HEAD_RESOURCE,
    LeastLoaded,
    NodeView,
    capacity,
    nodes_from_ray,
    plan_executors,
    plan_roles,
)

HEAD = NodeView("head", True, {"CPU": 2, HEAD_RESOURCE: 1}, is_head=True)


def worker(name: str, alive: bool = True, **resources: float) -> NodeView:
    return NodeView(name, alive, {"CPU": 1, **resources})


def test_nodes_from_ray_reads_liveness_resources_and_the_head_marker():
    raw = [{"NodeID": "a", "Alive": True, "Resources": {"CPU": 2.0, HEAD_RESOURCE: 1.0},
            "NodeManagerAddress": "10.0.0.1"},
           {"NodeID": "b", "Alive": False, "Resources": {}, "NodeManagerAddress": "10.0.0.2"}]
    a, b = nodes_from_ray(raw)
    assert a.is_head and a.alive and a.resources["CPU"] == 2.0 and a.address == "10.0.0.1"
    assert not b.is_head and not b.alive


@pytest.mark.parametrize(("resources", "request_", "expected"), [
    ({"exec": 2}, {"exec": 1}, 2),
    ({"exec": 0.3}, {"exec": 0.1}, 3),            # fractional amounts do not lose one to rounding
    ({"exec": 1}, {"exec": 1, "gpu": 1}, 0),      # every resource must be there
    ({}, {}, None),                               # nothing asked: no limit (our actors use num_cpus=0)
    ({}, {"exec": 0}, None),
])
def test_capacity(resources, request_, expected):
    assert capacity(NodeView("n", True, resources), request_) == expected


def test_roles_go_round_robin_over_workers_and_never_to_the_head():
    nodes = [HEAD, worker("w2"), worker("w1")]
    assert plan_roles(nodes, home="head", request={}, replicas=3) == ["w1", "w2", "w1"]


def test_roles_use_the_supervisor_node_only_when_nothing_else_fits():
    assert plan_roles([HEAD], home="head", request={}, replicas=2) == ["head", "head"]
    # The custom resource exists only on the head: that is where the user wants the role.
    nodes = [NodeView("head", True, {"llm": 1, HEAD_RESOURCE: 1}, is_head=True), worker("w1")]
    assert plan_roles(nodes, home="head", request={"llm": 0.5}, replicas=2) == ["head", "head"]


def test_roles_respect_custom_resources_and_capacity():
    nodes = [HEAD, worker("w1", llm=1), worker("w2"), worker("w3", llm=1)]
    assert plan_roles(nodes, "head", {"llm": 1}, replicas=2) == ["w1", "w3"]
    # Only two slots exist: the third replica has no node (Ray queues it; ActorStartError explains).
    assert plan_roles(nodes, "head", {"llm": 1}, replicas=3) == ["w1", "w3", None]


def test_dead_nodes_get_nothing():
    nodes = [HEAD, worker("w1", alive=False), worker("w2")]
    assert plan_roles(nodes, "head", {}, replicas=2) == ["w2", "w2"]
    assert plan_executors(nodes, "head", {}, per_node=2, existing={}) == ["w2", "w2"]


def test_executors_per_node_bounded_by_the_node_resources():
    nodes = [HEAD, worker("w1", exec=1), worker("w2", exec=4), worker("w3")]
    assert plan_executors(nodes, "head", {"exec": 1}, per_node=2, existing={}) == ["w1", "w2", "w2"]


def test_a_joining_node_gets_only_its_own_executors():
    before = [HEAD, worker("w1"), worker("w2")]
    placed = plan_executors(before, "head", {}, per_node=2, existing={})
    existing = {n: placed.count(n) for n in set(placed)}
    after = [*before, worker("w3")]
    assert plan_executors(after, "head", {}, per_node=2, existing=existing) == ["w3", "w3"]
    assert plan_executors(after, "head", {}, per_node=2, existing={**existing, "w3": 2}) == []


def test_executors_start_on_the_head_of_a_one_node_ray_and_workers_add_theirs():
    assert plan_executors([HEAD], "head", {}, per_node=2, existing={}) == ["head", "head"]
    assert plan_executors([HEAD, worker("w1")], "head", {}, per_node=2, existing={"head": 2}) == ["w1", "w1"]


def test_the_supervisor_node_is_kept_free_even_when_it_is_not_the_head():
    nodes = [HEAD, worker("driver"), worker("w1")]
    assert plan_executors(nodes, "driver", {}, per_node=1, existing={}) == ["w1"]


def test_least_loaded_spreads_ties_round_robin_and_prefers_idle_replicas():
    lb = LeastLoaded(3)
    first = [lb.acquire() for _ in range(3)]
    assert first == [0, 1, 2]
    lb.release(1)
    assert lb.acquire() == 1           # the only idle one
    lb.grow(1)
    assert lb.acquire() == 3           # a new (idle) executor gets the next step
    assert lb.load() == [1, 1, 1, 1]
    lb.release(0)
    lb.release(0)                      # releasing twice never goes negative
    assert lb.load()[0] == 0


def test_least_loaded_skips_replicas_to_avoid_unless_none_is_left():
    lb = LeastLoaded(3)
    assert [lb.acquire(avoid={0}) for _ in range(3)] == [1, 2, 1]
    assert lb.acquire(avoid={0, 1, 2}) == 0          # nothing else left: better than no executor at all


def test_least_loaded_without_replicas_says_so():
    with pytest.raises(IndexError):
        LeastLoaded().acquire()
