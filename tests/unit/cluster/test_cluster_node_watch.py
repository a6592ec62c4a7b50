"""The node watcher's growth logic with fakes for Ray, the executor factory and the Supervisor."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.cluster.node_watch import NodeWatcher
from agents.cluster.placement import HEAD_RESOURCE, NodeView
from agents.config import RuntimeConfig


@dataclass(eq=False)  # hashable: the watcher keys its ping refs by them
class FakeExecutor:
    node: str
    starts: bool = True

    @property
    def ping(self):
        return self

    def remote(self):
        return ("ping", self)


@dataclass
class FakeRay:
    killed: list = field(default_factory=list)

    def wait(self, refs, num_returns, timeout):
        ready = [r for r in refs if r[1].starts]
        return ready, [r for r in refs if not r[1].starts]

    def get(self, value):
        return value

    def kill(self, handle, no_restart):
        self.killed.append(handle.node)


class FakeFactory:
    def __init__(self, failing: set[str] = frozenset()) -> None:
        self.failing = failing
        self.started: list[FakeExecutor] = []

    def start(self, nodes):
        handles = [FakeExecutor(n, n not in self.failing) for n in nodes]
        self.started.extend(handles)
        return handles


class FakeSupervisor:
    def __init__(self, pool: int) -> None:
        self.pool = pool
        self.added: list[str] = []

    @property
    def add_executors(self):
        return self

    def remote(self, handles):
        self.added.extend(h.node for h in handles)
        self.pool += len(handles)
        return self.pool


HEAD = NodeView("head", True, {HEAD_RESOURCE: 1}, is_head=True)


def _watcher(nodes: list[list[NodeView]], factory=None, ray=None, per_node: int = 2):
    supervisor = FakeSupervisor(pool=2)
    snapshots = iter(nodes)
    watcher = NodeWatcher(RuntimeConfig(deployment={"executors_per_node": per_node,
                                                    "role_resources": {"executor": {"exec": 1}}}),
                          factory or FakeFactory(), supervisor, home="head", placed=["w1", "w1"],
                          list_nodes=lambda: next(snapshots), clock=lambda: 7.0, ray_api=ray or FakeRay())
    return watcher, supervisor


def test_nothing_happens_while_the_nodes_stay_the_same():
    w1 = NodeView("w1", True, {"exec": 4})
    watcher, supervisor = _watcher([[HEAD, w1], [HEAD, w1]])
    assert watcher.poll_once() == [] and watcher.poll_once() == []
    assert supervisor.added == []


def test_a_new_node_gets_its_executors_once_and_the_pool_grows():
    w1, w2 = NodeView("w1", True, {"exec": 4}), NodeView("w2", True, {"exec": 1})
    watcher, supervisor = _watcher([[HEAD, w1, w2], [HEAD, w1, w2]])
    [growth] = watcher.poll_once()
    # w2 holds one "exec": one executor, not executors_per_node=2.
    assert (growth.node_id, growth.started, growth.pool_size, growth.at) == ("w2", 1, 3, 7.0)
    assert supervisor.added == ["w2"]
    assert watcher.poll_once() == [] and watcher.history == [growth]


def test_a_node_without_the_executor_resource_or_dead_gets_nothing():
    w1 = NodeView("w1", True, {"exec": 4})
    watcher, supervisor = _watcher([[HEAD, w1, NodeView("gpu", True, {"gpu": 1}),
                                     NodeView("w3", False, {"exec": 4})]])
    assert watcher.poll_once() == [] and supervisor.added == []


def test_executors_that_do_not_start_are_killed_not_added_and_the_node_is_tried_again():
    w1, w2 = NodeView("w1", True, {"exec": 4}), NodeView("w2", True, {"exec": 4})
    factory, ray = FakeFactory(failing={"w2"}), FakeRay()
    watcher, supervisor = _watcher([[HEAD, w1, w2], [HEAD, w1, w2]], factory=factory, ray=ray)
    assert watcher.poll_once() == []
    assert ray.killed == ["w2", "w2"] and supervisor.added == []
    factory.failing = set()
    [growth] = watcher.poll_once()
    assert (growth.node_id, growth.started) == ("w2", 2)
