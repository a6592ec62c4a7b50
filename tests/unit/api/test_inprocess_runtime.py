"""``Orchestrator(..., runtime="inprocess")``: the public API without Ray, as a user's own tests use it.

The first test is the example docs/testing.md shows; tests/integration/test_orchestrator_flows.py runs the
public-API flows on both runtimes.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents import Orchestrator, RuntimeConfig, tool
from agents.errors import ConfigError, OrchestratorClosedError, UnknownTaskError
from agents.llm import FunctionLLM, LLMRequest

ROOT = Path(__file__).resolve().parents[3]


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


def script(request: LLMRequest) -> str:
    """Every role's reply, in the wire formats of DESIGN.md."""
    if request.role == "router":
        return json.dumps({"route": "plan", "confidence": 0.9, "reason": "needs a lookup", "answer": None})
    if request.role == "planner":
        return json.dumps({"steps": [
            {"step_id": 1, "description": "Paris", "tool_name": "population", "tool_input": {"city": "Paris"},
             "depends_on": []},
            {"step_id": 2, "description": "Rome", "tool_name": "population", "tool_input": {"city": "Rome"},
             "depends_on": []}]})
    return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                       "action": "accept", "retry_details": None, "feedback": "",
                       "answer": "Rome: 2.8 million, Paris: 2.1 million"})


def test_my_agent_answers_with_my_tool(tmp_path):
    orch = Orchestrator(llm=FunctionLLM(script), tools=[population],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")
    try:
        handle = orch.submit("Which is bigger, Paris or Rome?")
        types = [event.type for event in handle.events()]
        result = handle.result(timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == "Rome: 2.8 million, Paris: 2.1 million"
    assert [step.output for step in result.steps] == [2.1, 2.8]
    assert result.usage.total.llm_calls == 3
    assert types[0] == "task_submitted" and types[-1] == "task_finished" and types.count("step_finished") == 2


def test_no_ray_nor_openai_is_imported_in_a_fresh_interpreter(tmp_path):
    """Neither is needed without their runtime or client: openai alone is ~70,000 objects every full GC pass
    of the process walks (a sixth of a one-step task's CPU in-process), and a second of import."""
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_inprocess_runtime import population, script
        from agents import Orchestrator, RuntimeConfig
        from agents.llm import FunctionLLM
        with Orchestrator(llm=FunctionLLM(script), tools=[population], runtime="inprocess",
                          config=RuntimeConfig(store_path={str(tmp_path / "t.db")!r})) as orch:
            status = orch.run("Which is bigger, Paris or Rome?", timeout=30).status
        print(status, "ray" in sys.modules, "openai" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["accepted", "False", "False"]


def test_a_finished_tasks_events_are_served_from_the_store_not_kept_in_memory(tmp_path):
    """The events live readers were served are dropped when the run ends (a long-running Supervisor would
    otherwise keep every task's), and a reader after the end gets the same events from the store."""
    with Orchestrator(llm=FunctionLLM(script), tools=[population], runtime="inprocess",
                      config=RuntimeConfig(store_path=tmp_path / "t.db")) as orch:
        handle = orch.submit("Which is bigger, Paris or Rome?")
        live = [event.model_dump() for event in handle.events()]
        handle.result(timeout=30)
        again = [event.model_dump() for event in handle.events()]
        kept = orch._backend._core._live  # type: ignore[attr-defined]
    assert live == again and live[-1]["type"] == "task_finished" and handle.task_id not in kept


def test_the_async_api_and_the_store_are_shared_with_a_second_orchestrator(tmp_path):
    config = RuntimeConfig(store_path=tmp_path / "t.db")

    async def run() -> tuple[list[str], str]:
        orch = Orchestrator(llm=FunctionLLM(script), tools=[population], config=config, runtime="inprocess")
        try:
            handle = orch.submit("Which is bigger, Paris or Rome?")
            types = [event.type async for event in handle.aevents()]
            return types, (await handle.aresult(timeout=30)).task_id
        finally:
            orch.shutdown()

    types, task_id = asyncio.run(run())
    assert types[-1] == "task_finished"
    with Orchestrator(llm=FunctionLLM(script), tools=[population], config=config, runtime="inprocess") as again:
        assert again.handle(task_id).result(timeout=10).answer == "Rome: 2.8 million, Paris: 2.1 million"
        with pytest.raises(UnknownTaskError):
            again.handle("no-such-task")


def test_wrong_runtime_arguments_are_refused_plainly(tmp_path):
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    with pytest.raises(ConfigError, match="runtime must be one of 'ray', 'inprocess'"):
        Orchestrator(llm=FunctionLLM(script), tools=[population], config=config,
                     runtime="local")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="joins no cluster"):
        Orchestrator(llm=FunctionLLM(script), tools=[population], config=config, address="auto", runtime="inprocess")


def test_calls_after_shutdown_say_so(tmp_path):
    orch = Orchestrator(llm=FunctionLLM(script), tools=[population],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")
    orch.shutdown()
    with pytest.raises(OrchestratorClosedError):
        orch.submit("Which is bigger, Paris or Rome?")
