"""MCP tools on a 2-worker ray.cluster_utils.Cluster: executors on both nodes each open their own stdio server
process and reach the HTTP server by URL; a server crash mid-task is retried after reconnecting."""

from __future__ import annotations

import pytest
from support import wire
from support.cluster import module_cluster
from support.mcp_fixtures import http_server, log_lines, stdio_server

from agents import Deployment, Orchestrator, RuntimeConfig, ToolPolicy
from agents.llm import FunctionLLM

pytestmark = [pytest.mark.ray, pytest.mark.cluster]


@pytest.fixture(scope="module")
def cluster(request):
    import ray

    with module_cluster(request.module.__name__, [{"exec": 1}, {"exec": 1}]) as (c, nodes):
        yield c, nodes
        if ray.is_initialized():
            ray.shutdown()


def test_mcp_steps_run_on_both_nodes_and_survive_a_server_crash(cluster, tmp_path):
    c, (a, b) = cluster
    log = tmp_path / "stdio.log"
    marker = tmp_path / "crashed"
    # at most two equal reads: a third copy of one call is a looping planner, and the plan would end there
    steps = [wire.step(i, "s_slow", {"seconds": s}) for i, s in ((1, 0.6), (2, 0.6), (3, 0.7), (4, 0.7))]
    steps += [wire.step(5, "h_population", {"city": "Berlin"}),
              wire.step(6, "s_crash_once", {"marker": str(marker)}, deps=[1])]
    plan = wire.plan(*steps)
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    with http_server(tmp_path / "http.log") as proc:
        config = RuntimeConfig(store_path=tmp_path / "t.db", tools=ToolPolicy(max_attempts=5, backoff_s=0.2),
                               deployment=Deployment(namespace="cluster-mcp", executors_per_node=1, watch_nodes=False,
                                                     role_resources={"executor": {"exec": 1}}))
        orch = Orchestrator(llm=llm, tools=[stdio_server(log, prefix="s"), proc.config(prefix="h")], config=config,
                            address=c.address)
        try:
            handle = orch.submit("fan out over MCP")
            result = handle.result(timeout=180)
            nodes = {e.payload.step_id: e.payload.node_id for e in handle.events() if e.type == "step_finished"}
        finally:
            orch.shutdown()
        http_calls = log_lines(tmp_path / "http.log")
    assert result.status == "accepted", result.error
    assert [s.output for s in result.steps] == ["waited 0.6s"] * 2 + ["waited 0.7s"] * 2 + [3.7, 7]
    assert set(nodes.values()) == {a.node_id, b.node_id}, "the MCP steps did not spread over both workers"
    assert "population Berlin" in http_calls
    assert log_lines(log).count("crash_once crashed") == 1 and "crash_once answered" in log_lines(log)
