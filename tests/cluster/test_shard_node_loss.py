"""A node holding a Supervisor shard is lost mid-task (``ray.cluster_utils.Cluster``, the store on PostgreSQL):
Ray restarts the shard on another node, the shard takes its task over through the store's lease, and the task
finishes there — its events and steps complete, and the write that completed before the loss ran once."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
from support import tools as T
from support import wire
from support.cluster import module_cluster

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.cluster.shards import shard_of
from agents.llm import FunctionLLM

pytestmark = [pytest.mark.ray, pytest.mark.cluster]


@pytest.fixture(scope="module")
def cluster(request):
    """A head (driver, shard 0, journal, roles) and three workers fitting one executor each; shard 1 goes to a
    worker."""
    import ray

    with module_cluster(request.module.__name__, [{"exec": 1, f"worker{i}": 1} for i in range(3)]) as (c, workers):
        ray.init(address=c.address, namespace="tetrarch-shard-tests", log_to_driver=False, configure_logging=False)
        yield c, workers
        ray.shutdown()


def _plan(request) -> str:
    """Each task writes its own note (named in its text), waits, then looks Rome up."""
    text = " ".join(str(m.get("content", "")) for m in request.messages)
    note = re.search(r"note (\S+) then", text).group(1)
    return wire.plan(wire.step(1, "append_note", {"note": note}),
                     wire.step(2, "blocking_sleep", {"seconds": 3.0, "label": "slow"}, deps=[1]),
                     wire.step(3, "lookup", {"city": "Rome"}, deps=[2]))


def _script() -> FunctionLLM:
    return FunctionLLM(lambda r: _plan(r) if r.role == "planner" else {
        "router": wire.route(), "reflector": wire.reflection(answer="ok")}[r.role])


def test_the_node_of_a_shard_dies_and_its_task_finishes_on_another_node(cluster, postgres_url):
    import ray

    c, workers = cluster
    prefix = f"shard-node-{os.getpid()}-{time.time_ns()}"
    config = RuntimeConfig(store_url=postgres_url, supervisors=2, deployment=Deployment(
        num_executors=2, role_resources={"executor": {"exec": 1}, "router": {"head": 0.1},
                                         "planner": {"head": 0.1}, "reflector": {"head": 0.1}}))
    with Orchestrator(llm=_script(), tools=T.ALL, config=config) as orch:
        shard = orch._actors.supervisors[1]
        node = ray.get(shard.ping.remote())
        assert node in {w.node_id for w in workers}, "shard 1 should run on a worker node"
        handles = []
        while not handles or shard_of(handles[-1].task_id, 2) != 1:
            handles.append(orch.submit(f"write the note {prefix}-{len(handles)} then wait and look up Rome"))
        handle, note = handles[-1], f"{prefix}-{len(handles) - 1}"
        for event in handle.events():
            if event.type == "step_finished" and event.payload.step_id == 1:
                break
        # A crashed machine takes its processes with it: the shard's process dies with its raylet.
        os.kill(ray.get(shard.pid.remote()), signal.SIGKILL)
        c.remove_node(next(w for w in workers if w.node_id == node), allow_graceful=False)
        result = handle.result(timeout=240)
        moved_to = ray.get(shard.ping.remote())
        events = list(orch.handle(handle.task_id).events())
    assert result.status == "accepted", result.error
    assert moved_to != node
    assert [s.status for s in result.steps] == ["completed"] * 3
    assert T.count(f"note-{note}") == 1, "the write that completed before the node died ran again"
    assert events[-1].type == "task_finished" and [e.seq for e in events] == list(range(1, len(events) + 1))
