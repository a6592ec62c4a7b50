"""Multi-node behaviour on a ray.cluster_utils.Cluster (several raylets on this machine): roles placed by
custom resources, and a worker node killed mid-step — the task completes on the nodes that are left."""

from __future__ import annotations

import os
import signal
import time

import pytest
from support import tools as T
from support import wire

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM

pytestmark = [pytest.mark.ray, pytest.mark.cluster]


@pytest.fixture(scope="module")
def cluster(request):
    """A head (driver, Supervisor, journal) and three workers that each fit one executor ("exec": 1), so a
    killed worker's executor can only come back on the spare one."""
    import sys

    import ray
    import support
    from ray import cloudpickle

    from benchmarks.cluster.local_cluster import local_cluster

    cloudpickle.register_pickle_by_value(support)
    cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])
    if ray.is_initialized():
        ray.shutdown()
    with local_cluster([{"exec": 1, f"worker{i}": 1} for i in range(3)], head_cpus=2) as (c, workers):
        ray.init(address=c.address, namespace="tetrarch-cluster-tests", log_to_driver=False,
                 configure_logging=False)
        yield c, workers
        ray.shutdown()


def _script(plan: str) -> FunctionLLM:
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                  "reflector": wire.reflection(answer="ok")}[r.role])


def _config(tmp_path, name: str) -> RuntimeConfig:
    return RuntimeConfig(store_path=tmp_path / f"{name}.db", deployment=Deployment(
        num_executors=2, role_resources={"executor": {"exec": 1}, "router": {"head": 0.1},
                                         "planner": {"head": 0.1}, "reflector": {"head": 0.1}}))


def test_executors_are_placed_by_their_resources_on_separate_workers(cluster, tmp_path):
    import ray

    _c, workers = cluster
    orch = Orchestrator(llm=_script(wire.plan(wire.step(1, "lookup", {"city": "Paris"}))), tools=T.ALL,
                        config=_config(tmp_path, "placement"))
    try:
        nodes = ray.get([e.ping.remote() for e in orch._actors.executors])
        worker_ids = {w.node_id for w in workers}
        assert len(set(nodes)) == 2 and set(nodes) <= worker_ids
        assert ray.get(orch._actors.supervisor.ping.remote()) not in worker_ids
        result = orch.run("population of Paris", timeout=120)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error


def test_a_worker_node_killed_mid_step_costs_only_that_step(cluster, tmp_path):
    import ray

    c, workers = cluster
    plan = wire.plan(wire.step(1, "lookup", {"city": "Rome"}),
                     wire.step(2, "blocking_sleep", {"seconds": 4.0, "label": "survived"}),
                     wire.step(3, "subtract", {"a": "$step_1_result", "b": 1.0}, deps=[1]))
    orch = Orchestrator(llm=_script(plan), tools=T.ALL, config=_config(tmp_path, "nodekill"))
    try:
        handle = orch.submit("survive a node failure")
        executor = ""
        for event in handle.events():
            if event.type == "step_started" and event.payload.step_id == 2:
                executor = event.payload.executor
                break
        index = int(executor.removeprefix("executor-"))
        victim_node = ray.get(orch._actors.executors[index].ping.remote())
        time.sleep(0.5)
        victim = next(w for w in workers if w.node_id == victim_node)
        # A crashed machine takes its worker processes with it. remove_node() alone stops the raylet, and
        # a core worker notices that only after seconds — long enough to finish the step and reply
        # straight to its caller. So the executor's process dies with its node, as on real hardware.
        pid = ray.get(orch._actors.executors[index].pid.remote())
        os.kill(pid, signal.SIGKILL)
        c.remove_node(victim, allow_graceful=False)
        started = time.monotonic()
        result = handle.result(timeout=180)
        recovered_s = time.monotonic() - started
        events = [e for e in handle.events() if getattr(e.payload, "step_id", None) == 2]
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    steps = {s.step_id: s for s in result.steps}
    assert steps[2].output == "survived"
    assert steps[1].attempts == 1 and steps[3].output == pytest.approx(1.8)
    lost = [e for e in events if e.type == "step_failed"]
    assert len(lost) == 1 and lost[0].payload.error_kind == "executor_died" and lost[0].payload.will_retry
    starts = [e.payload.executor for e in events if e.type == "step_started"]
    assert len(starts) == 2 and starts[0] == executor and starts[1] != executor
    print(f"node killed mid-step; task finished {recovered_s:.1f}s later")
