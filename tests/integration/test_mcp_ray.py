"""MCP in both directions on one local Ray session: an Orchestrator whose tools come from a stdio and an HTTP
MCP server (executor actors open their own sessions), and tetrarch served over MCP to the SDK's own client."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
import ray
from mcp import Client
from support import tools as T
from support import wire
from support.mcp_fixtures import http_server, log_lines, stdio_server

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.cli.mcp_serve import build_server
from agents.llm import FunctionLLM

pytestmark = pytest.mark.ray

PLAN = wire.plan(wire.step(1, "s_population", {"city": "Paris"}),
                 wire.step(2, "h_population", {"city": "Rome"}),
                 wire.step(3, "h_slow", {"seconds": 0.5}),
                 wire.step(4, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
                 wire.step(5, "h_header", {"name": "x-tenant"}))


@pytest.fixture(scope="module")
def http_proc(tmp_path_factory):
    log = tmp_path_factory.mktemp("mcp-http") / "calls.log"
    with http_server(log) as proc:
        proc.log = log
        yield proc


def scripted(plan: str, answer: str = "Rome, by 0.7 million") -> FunctionLLM:
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                  "reflector": wire.reflection(answer=answer)}[r.role])


def test_orchestrator_runs_a_plan_over_stdio_and_http_mcp_servers(ray_session, http_proc, tmp_path):
    log = tmp_path / "stdio.log"
    orch = Orchestrator(llm=scripted(PLAN), tools=[*T.ALL, stdio_server(log, prefix="s"),
                                                       http_proc.config(prefix="h", headers={"X-Tenant": "t1"})],
                        config=RuntimeConfig(store_path=tmp_path / "t.db", deployment=Deployment(num_executors=2)))
    try:
        assert {"s_population", "h_population", "h_save_note", "lookup"} <= {t.name for t in orch.tools}
        result = orch.run("Which is bigger, Paris or Rome, and by how much?", timeout=120)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    # The executor's own session (from the pickled configuration) sends the headers too.
    assert [s.output for s in result.steps] == [2.1, 2.8, "waited 0.5s", pytest.approx(0.7), "t1"]
    assert "population Paris" in log_lines(log), "the stdio server started by the executor did not run the call"
    assert "population Rome" in log_lines(http_proc.log)


def test_a_destructive_mcp_tool_waits_for_approval_then_runs_once(ray_session, http_proc, tmp_path):
    plan = wire.plan(wire.step(1, "h_save_note", {"text": "ray-approved"}))
    orch = Orchestrator(llm=scripted(plan, "saved"), tools=[http_proc.config(prefix="h")],
                        config=RuntimeConfig(store_path=tmp_path / "t.db", deployment=Deployment(num_executors=1)))
    try:
        first = orch.run("save a note", timeout=120)
        assert first.status == "escalated" and first.stopped_reason == "needs_confirmation"
        assert "save_note ray-approved" not in log_lines(http_proc.log)
        second = orch.respond(first.task_id, "approve").result(timeout=120)
    finally:
        orch.shutdown()
    assert second.status == "accepted" and second.steps[0].output == "saved"
    assert log_lines(http_proc.log).count("save_note ray-approved") == 1


def test_mcp_serve_runs_a_task_for_the_sdk_client_with_progress(ray_session, tmp_path):
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                     wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
    orch = Orchestrator(llm=scripted(plan), tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"))
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def call() -> tuple[dict, dict]:
        async with Client(build_server(orch)) as client:
            ran = await client.call_tool("run_task", {"task": "Paris or Rome?"}, progress_callback=on_progress)
            status = await client.call_tool("task_status", {"task_id": ran.structured_content["task_id"]})
            return ran.structured_content, status.structured_content

    try:
        ran, status = asyncio.run(call())
    finally:
        orch.shutdown()
    assert ran["status"] == "accepted" and ran["answer"] == "Rome, by 0.7 million"
    assert ran["plan_summary"][0].startswith("1. lookup(city) — completed")
    assert status["status"] == "accepted" and status["task_id"] == ran["task_id"]
    messages = [m for _, m in progress]
    assert messages[-1] == "task_finished" and any(m.startswith("step_finished step 3") for m in messages)
    assert [v for v, _ in progress] == list(range(1, len(progress) + 1))


def _until(condition, what: str) -> None:
    # Waits for a notification to travel executor -> Supervisor; fails with a message, never on a timing.
    for _ in range(600):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_tool_added_at_run_time_is_in_the_next_plan(ray_session, tmp_path, transport):
    # http: the Supervisor's own watch session is told. stdio: only the executor's server process is, the
    # executor forwards the change, and the Supervisor re-lists from a fresh process (which reads the tools file).
    def reply(request):
        text = " ".join(m["content"] for m in request.messages)
        if request.role == "planner":
            if "add a tool" in text:
                return wire.plan(wire.step(1, "x_add_tool", {"name": "twice"}))
            # Listed in the prompt only when the catalog was refreshed; a plan naming a tool the planner does
            # not know is rejected (and repaired once, then the task fails).
            assert "- x_twice(" in text, "the planner's catalog lacks the new tool"
            return wire.plan(wire.step(1, "x_twice", {"x": 21}))
        return {"router": wire.route(), "reflector": wire.reflection(answer="done")}[request.role]

    with contextlib.ExitStack() as stack:
        if transport == "http":
            server = stack.enter_context(http_server()).config(prefix="x")
        else:
            server = stdio_server(tools_file=tmp_path / "tools.txt", prefix="x")
        orch = Orchestrator(llm=FunctionLLM(reply), tools=[*T.ALL, server],
                            config=RuntimeConfig(store_path=tmp_path / "t.db", deployment=Deployment(num_executors=2)))
        stack.callback(orch.shutdown)
        first = orch.run("add a tool", timeout=120)
        assert first.status == "accepted" and first.steps[0].output == "added", first.error
        catalog = orch._supervisor.tool_catalog
        _until(lambda: ray.get(catalog.remote())["stale"], "the Supervisor heard of the change")
        second = orch.run("double 21", timeout=120)
        after = ray.get(catalog.remote())
    assert second.status == "accepted" and second.steps[0].output == 42, second.error
    assert after == {"version": 1, "stale": []}
