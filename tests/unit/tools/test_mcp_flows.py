"""Whole tasks through the real state machine and roles (in-process, no Ray) with a real MCP server built
with the SDK, over stdio and streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from agents.config import RuntimeConfig, ToolPolicy
from agents.llm import FunctionLLM, ScriptedLLM
from agents.tools import resolve_tools
from support import tools as T
from support import wire
from support.local import run_task
from support.mcp_fixtures import http_server, log_lines, stdio_server

# Reconnects take a server restart (HTTP) or a new process (stdio): give transient failures room.
CONFIG = RuntimeConfig(tools=ToolPolicy(max_attempts=6, backoff_s=0.2, backoff_max_s=2.0), step_timeout_s=30)


@pytest.fixture(scope="module")
def http_proc(tmp_path_factory):
    log = tmp_path_factory.mktemp("mcp-http") / "calls.log"
    with http_server(log, restart=True) as proc:
        proc.log = log
        yield proc


@pytest.fixture(params=["stdio", "http"])
def mcp(request, tmp_path):
    """(server config, its call log) for each transport."""
    if request.param == "stdio":
        log = tmp_path / "calls.log"
        return stdio_server(log, prefix="m"), log
    proc = request.getfixturevalue("http_proc")
    proc.wait_ready()
    return proc.config(prefix="m"), proc.log


def run(llm, server, config=CONFIG, task="Look up what the plan needs with the MCP tools"):
    tools = resolve_tools([*T.ALL, server])
    return asyncio.run(run_task(llm, task, tools=tools, config=config))


def test_a_plan_mixing_tool_and_mcp_steps_runs_in_parallel_and_is_accepted(mcp):
    server, log = mcp
    plan = wire.plan(wire.step(1, "m_population", {"city": "Paris"}),
                     wire.step(2, "lookup", {"city": "Rome"}),
                     wire.step(3, "m_slow", {"seconds": 0.8}),
                     wire.step(4, "sleepy", {"seconds": 0.8, "label": "done"}),
                     wire.step(5, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer="0.7")]})
    result, _ = run(llm, server)
    assert result.status == "accepted", result.error
    assert [s.output for s in result.steps] == [2.1, 2.8, "waited 0.8s", "done", pytest.approx(0.7)]
    slow_mcp, slow_py = result.steps[2], result.steps[3]
    assert slow_mcp.started_at < slow_py.finished_at and slow_py.started_at < slow_mcp.finished_at, "not parallel"
    llm.assert_complete()


def test_bad_arguments_are_rejected_before_the_call_and_repaired_once(mcp):
    server, log = mcp
    # The plan is valid as written; the value that arrives at run time (a number for a string) is not.
    llm = ScriptedLLM({"router": [wire.route()],
                       "planner": [wire.plan(wire.step(1, "lookup", {"city": "Rome"}),
                                             wire.step(2, "m_population", {"city": "$step_1_result"}, deps=[1]))],
                       "executor": ['{"city": "Paris"}'],
                       "reflector": [wire.reflection(answer="2.1")]})
    before = log_lines(log)
    result, _ = run(llm, server)
    assert result.status == "accepted" and result.steps[1].output == 2.1
    assert log_lines(log)[len(before):] == ["population Paris"], "the invalid call reached the server"
    assert result.usage.by_role["executor"].llm_calls == 1


def test_the_destructive_tool_escalates_for_confirmation_before_it_runs(mcp):
    server, log = mcp
    note = f"note-{uuid.uuid4().hex[:6]}"
    llm = ScriptedLLM({"router": [wire.route()], "planner": [wire.plan(wire.step(1, "m_save_note", {"text": note}))]})
    result, _ = run(llm, server)
    assert result.status == "escalated" and result.stopped_reason == "needs_confirmation"
    assert "m_save_note" in result.question
    assert not any(note in line for line in log_lines(log))


def test_is_error_fails_the_step_with_the_server_message_and_the_reflector_sees_it(mcp):
    server, _ = mcp
    seen = []

    def script(request):
        if request.role == "reflector":
            seen.append(" ".join(m["content"] for m in request.messages))
            return wire.reflection("escalate", (1, 1, 1), answer=None, feedback="the tool refused")
        return {"router": wire.route(), "planner": wire.plan(wire.step(1, "m_fail", {"reason": "nope"}))}[request.role]

    llm = FunctionLLM(script)
    result, _ = run(llm, server)
    step = result.steps[0]
    assert step.status == "failed" and "refused: nope" in step.error and step.attempts == 1
    assert "refused: nope" in seen[0]
    assert result.status == "escalated"


def test_a_server_that_crashes_on_every_call_ends_in_a_clear_error_naming_it(mcp):
    server, _ = mcp
    llm = ScriptedLLM({"router": [wire.route()], "planner": [wire.plan(wire.step(1, "m_crash", {}))],
                       "reflector": [wire.reflection("escalate", (1, 1, 1), answer=None, feedback="server down")]})
    once_more = CONFIG.tools.model_copy(update={"max_attempts": 2})
    result, _ = run(llm, server, config=CONFIG.model_copy(update={"tools": once_more}))
    error = result.steps[0].error
    assert result.steps[0].status == "failed" and server.label in error and "gave up after 2 attempts" in error


def test_a_crash_mid_task_is_retried_after_reconnecting(mcp, tmp_path):
    server, _ = mcp
    marker = tmp_path / f"crashed-{uuid.uuid4().hex[:6]}"
    plan = wire.plan(wire.step(1, "m_population", {"city": "Rome"}),
                     wire.step(2, "m_crash_once", {"marker": str(marker)}, deps=[1]),
                     wire.step(3, "m_population", {"city": "Berlin"}, deps=[2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [wire.reflection(answer="7")]})
    result, _ = run(llm, server)
    assert result.status == "accepted", [(s.status, s.error) for s in result.steps]
    assert [s.output for s in result.steps] == [2.8, 7, 3.7], [(s.status, s.error) for s in result.steps]
    assert marker.exists() and result.steps[1].attempts == 1


def test_a_cancelled_call_leaves_the_session_usable(mcp):
    server, _ = mcp
    plan = wire.plan(wire.step(1, "m_slow", {"seconds": 30}), wire.step(2, "m_population", {"city": "Paris"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan],
                       "executor": ['{"seconds": 0.1}'],
                       "reflector": [wire.reflection("retry_step", (2, 2, 3), answer=None, retry_step=1,
                                                     modification="wait 0.1 s"),
                                     wire.reflection(answer="ok")]})
    # Long enough to start a stdio server on a busy machine, far shorter than the slow call.
    result, _ = run(llm, server, config=CONFIG.model_copy(update={"step_timeout_s": 4.0}))
    assert result.status == "accepted"
    assert [s.output for s in result.steps] == ["waited 0.1s", 2.1] and result.steps[0].attempts == 2
