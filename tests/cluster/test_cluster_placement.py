"""Placement on a multi-node cluster (ray.cluster_utils.Cluster: several raylets on this machine), with the
code shipped in the job's runtime_env the way a real cluster gets it: roles land on the intended nodes, one
task's steps run on several nodes, a node that joins mid-run gets executors and runs steps, and a tool module
that only the driver can import reaches the workers through runtime_env.

Every Orchestrator here connects by address (as ``Orchestrator(address=...)`` does on a real cluster) and
disconnects on shutdown, so one Cluster serves the module."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import wire
from support.cluster import module_cluster

from agents import Deployment, Orchestrator, RuntimeConfig, tool
from agents.errors import ClusterVersionMismatchError
from agents.llm import FunctionLLM
from benchmarks.cluster.local_cluster import add_worker

pytestmark = [pytest.mark.ray, pytest.mark.cluster]

ROOT = Path(__file__).resolve().parents[2]


@tool
async def pause(seconds: float, label: str) -> str:
    """Wait, then return the label.

    Args:
        seconds: How long.
        label: Returned as is.
    """
    await asyncio.sleep(seconds)
    return label


@tool
async def wait_for_file(path: str) -> str:
    """Wait until a file exists (the test creates it when it is ready for the next phase).

    Args:
        path: The file.
    """
    for _ in range(1200):
        if Path(path).exists():
            return "go"
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{path} never appeared")


@pytest.fixture(scope="module")
def cluster(request):
    """A head (driver, Supervisor, journal) and two workers; only worker "a" can host a model ("llm")."""
    import ray

    with module_cluster(request.module.__name__, [{"exec": 2, "llm": 1}, {"exec": 2}]) as (c, (a, b)):
        yield c, a, b
        if ray.is_initialized():
            ray.shutdown()


def _actor_name() -> str:
    import ray

    return ray.get_runtime_context().get_actor_name() or "?"


def _script(plan: str) -> FunctionLLM:
    """Routes and reflects with the replica's own actor name in the reply, so the result says which replica
    served the call."""
    def reply(r):
        match r.role:
            case "router":
                return wire.route(reason=_actor_name())
            case "planner":
                return plan
            case _:
                return wire.reflection(answer=_actor_name())
    return FunctionLLM(reply)


def _orch(c, tmp_path, name: str, plan: str, tools, **deployment) -> Orchestrator:
    cfg = RuntimeConfig(store_path=tmp_path / f"{name}.db",
                        deployment=Deployment(namespace=f"cluster-{name}", **deployment))
    return Orchestrator(llm=_script(plan), tools=tools, config=cfg, address=c.address)


def _step_nodes(handle) -> dict[int, str]:
    return {e.payload.step_id: e.payload.node_id for e in handle.events() if e.type == "step_finished"}


def test_roles_land_on_their_nodes_and_one_task_runs_on_several(cluster, tmp_path):
    import ray

    c, a, b = cluster
    fan_out = wire.plan(*[wire.step(i, "pause", {"seconds": 0.4, "label": f"s{i}"}) for i in range(1, 7)])
    orch = _orch(c, tmp_path, "roles", fan_out, [pause], role_replicas=2, executors_per_node=2,
                 watch_nodes=False,
                 role_resources={"planner": {"llm": 0.5}, "executor": {"exec": 1}})
    try:
        acts = orch._actors
        assert ray.get(acts.supervisor.ping.remote()) == c.head_node.node_id
        assert _nodes_of(acts.planners) == [a.node_id, a.node_id]              # the only node with "llm"
        assert sorted(_nodes_of(acts.routers)) == sorted([a.node_id, b.node_id])
        assert sorted(_nodes_of(acts.reflectors)) == sorted([a.node_id, b.node_id])
        assert sorted(_nodes_of(acts.executors)) == sorted([a.node_id] * 2 + [b.node_id] * 2)

        alone = orch.submit("fan out alone")
        first = alone.result(timeout=120)
        alone_nodes = _step_nodes(alone)
        handles = [orch.submit(f"fan out {i}") for i in range(4)]
        results = [first] + [h.result(timeout=120) for h in handles]
        handles.insert(0, alone)
        routers = {e.payload.reason for h in handles for e in h.events() if e.type == "routed"}
    finally:
        orch.shutdown()
    assert all(r.status == "accepted" for r in results), [r.error for r in results]
    # One task's six parallel steps went to the four executors of both workers.
    assert len(alone_nodes) == 6 and set(alone_nodes.values()) == {a.node_id, b.node_id}
    # Both replicas of the router and of the reflector served tasks.
    assert len(routers) == 2 and all(name.startswith("router-") for name in routers)
    reflectors = {r.answer for r in results}
    assert len(reflectors) == 2 and all(name.startswith("reflector-") for name in reflectors)


def _nodes_of(handles) -> list[str]:
    import ray

    return ray.get([h.ping.remote() for h in handles])


def test_a_node_joining_mid_run_gets_executors_and_runs_steps(cluster, tmp_path):
    c, _a, _b = cluster
    gate = tmp_path / "go"
    plan = wire.plan(wire.step(1, "wait_for_file", {"path": str(gate)}),
                     *[wire.step(i, "pause", {"seconds": 1.0, "label": f"s{i}"}, deps=[1]) for i in range(2, 8)])
    orch = _orch(c, tmp_path, "join", plan, [pause, wait_for_file], executors_per_node=1,
                 node_watch_interval_s=0.5, role_resources={"executor": {"exec": 1}})
    joined = None
    try:
        assert orch._factory.count == 2
        handle = orch.submit("use the new node")
        next(e for e in handle.events() if e.type == "step_started")  # the task is running
        joined = add_worker(c, {"exec": 1})
        deadline = time.monotonic() + 90
        while not orch._watcher.history and time.monotonic() < deadline:
            time.sleep(0.2)
        growth = list(orch._watcher.history)
        gate.write_text("go")  # only now do steps 2-7 become ready
        result = handle.result(timeout=120)
        nodes = _step_nodes(handle)
    finally:
        orch.shutdown()
        if joined is not None:
            c.remove_node(joined)
    assert [(g.node_id, g.started, g.pool_size) for g in growth] == [(joined.node_id, 1, 3)]
    assert result.status == "accepted", (result.stopped_reason, result.question, result.error,
                                         [(s.step_id, s.status, s.error) for s in result.steps])
    # Six 1-second steps over three executors: the least-loaded choice sends two to the newcomer.
    assert list(nodes.values()).count(joined.node_id) == 2


TOOL_MODULE = '''
from agents import tool


@tool
def area_km2(city: str) -> float:
    """Area of a city in square kilometres.

    Args:
        city: English city name.
    """
    return {"Paris": 105.4, "Rome": 1285.0}[city]
'''


def test_a_tool_module_only_the_driver_has_reaches_the_workers_through_runtime_env(cluster, tmp_path, monkeypatch):
    import ray

    c, _a, _b = cluster
    pkg = tmp_path / "driver_only_tools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))  # the driver's sys.path only: Ray does not copy it to workers
    from driver_only_tools import area_km2

    plan = wire.plan(wire.step(1, "area_km2", {"city": "Rome"}))
    orch = _orch(c, tmp_path, "shipped", plan, [area_km2], executors_per_node=1, watch_nodes=False)
    try:
        result = orch.run("area of Rome", timeout=120)
        shipped_from = ray.get(ray.remote(num_cpus=0)(_module_file).remote("driver_only_tools"))
    finally:
        orch.shutdown()
        sys.modules.pop("driver_only_tools", None)
    assert result.status == "accepted", result.error
    assert result.steps[0].output == 1285.0
    # The workers import the copy Ray unpacked from the runtime_env (the driver's path is not theirs).
    assert "runtime_resources" in shipped_from and "py_modules" in shipped_from, shipped_from

    # Control: without the runtime_env, the same workers cannot import the module.
    ray.init(address=c.address, namespace="cluster-control", log_to_driver=False, configure_logging=False)
    try:
        found = ray.get(ray.remote(num_cpus=0)(_can_import).remote("driver_only_tools"))
    finally:
        ray.shutdown()
    assert found is False


def _module_file(name: str) -> str:
    import importlib

    return importlib.import_module(name).__file__


def _can_import(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_a_version_mismatch_says_what_to_install(cluster):
    c, _a, _b = cluster
    # A driver whose Ray reports another version, connecting to this cluster: Ray's own check refuses it.
    script = textwrap.dedent(f"""
        import ray._private.utils as u
        real = u.compute_version_info
        u.compute_version_info = lambda: ("0.0.1", real()[1])
        from agents import Deployment, Orchestrator, RuntimeConfig
        from agents.errors import ClusterVersionMismatchError
        from agents.llm import FunctionLLM
        try:
            Orchestrator(llm=FunctionLLM(lambda request: ""), tools=[],
                         config=RuntimeConfig(deployment=Deployment(ship_code=False)),
                         address={c.address!r})
        except ClusterVersionMismatchError as exc:
            print("MISMATCH", exc)
    """)
    out = subprocess.run([sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert "MISMATCH" in out.stdout, out.stderr[-2000:]
    assert "0.0.1" in out.stdout and "Install the same versions" in out.stdout
    assert ClusterVersionMismatchError.__mro__[1].__name__ == "ClusterUnavailableError"
