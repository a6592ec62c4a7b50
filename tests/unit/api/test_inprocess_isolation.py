"""The in-process runtime isolates the user's code as the Ray runtime does: a check or a tool that raises
``SystemExit`` or ``KeyboardInterrupt`` fails its task (naming it) instead of killing the runtime's thread, and
every wait of a handle honours its timeout, even when that thread is gone."""

from __future__ import annotations

import json
import threading
import time

import pytest

from agents import Orchestrator, RuntimeConfig, ToolPolicy, tool
from agents.checks import AnswerReview
from agents.errors import InProcessRuntimeDiedError, InvalidTimeoutError, TaskTimeoutError
from agents.llm import FunctionLLM, LLMRequest


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


@tool(permission="read")
def interrupting(city: str) -> float:
    """Raises KeyboardInterrupt.

    Args:
        city: English city name.
    """
    raise KeyboardInterrupt


@tool(permission="read")
async def exiting(city: str) -> float:
    """Raises KeyboardInterrupt from a coroutine.

    Args:
        city: English city name.
    """
    raise KeyboardInterrupt


def script(tool_name: str):
    def reply(request: LLMRequest) -> str:
        if request.role == "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "lookup", "answer": None})
        if request.role == "planner":
            return json.dumps({"steps": [{"step_id": 1, "description": "Paris", "tool_name": tool_name,
                                          "tool_input": {"city": "Paris"}, "depends_on": []}]})
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "", "answer": "2.1 million"})
    return reply


def exits(review: AnswerReview) -> None:
    raise SystemExit(3)


async def interrupts(review: AnswerReview) -> None:
    raise KeyboardInterrupt


def _orch(tmp_path, tool_name="population", checks=()):
    return Orchestrator(llm=FunctionLLM(script(tool_name)), tools=[population, interrupting, exiting],
                        config=RuntimeConfig(store_path=tmp_path / "t.db", tools=ToolPolicy(max_attempts=1)),
                        runtime="inprocess", checks=list(checks))


@pytest.mark.parametrize("check", [exits, interrupts])
def test_a_check_that_exits_fails_the_task_naming_it(tmp_path, check):
    with _orch(tmp_path, checks=[check]) as orch:
        result = orch.submit("Population of Paris?").result(timeout=10)
        assert orch.run("Population of Paris?", timeout=10).status == "failed"  # the runtime still runs
    assert result.status == "failed"
    assert check.__name__ in result.error and ("SystemExit" in result.error or "KeyboardInterrupt" in result.error)


@pytest.mark.parametrize("name", ["interrupting", "exiting"])
def test_a_tool_that_interrupts_fails_its_step_not_the_runtime(tmp_path, name):
    with _orch(tmp_path, tool_name=name) as orch:
        result = orch.submit("Population of Paris?").result(timeout=10)
        again = orch.run("Population of Paris?", timeout=10)
    assert result.steps[0].status == "failed" and "KeyboardInterrupt" in (result.steps[0].error or "")
    assert again.steps[0].status == "failed"


def test_every_wait_honours_its_timeout_when_the_runtime_thread_died(tmp_path):
    orch = _orch(tmp_path)
    try:
        handle = orch.submit("Population of Paris?")
        handle.result(timeout=10)

        def die() -> None:
            raise KeyboardInterrupt

        orch._backend._loop.call_soon_threadsafe(die)
        orch._backend._thread.join(timeout=5)
        started = time.monotonic()
        with pytest.raises(InProcessRuntimeDiedError, match="KeyboardInterrupt") as caught:
            handle.result(timeout=2)
        assert isinstance(caught.value, TaskTimeoutError)
        with pytest.raises(InProcessRuntimeDiedError):
            list(handle.events())
        with pytest.raises(InProcessRuntimeDiedError):
            orch.submit("Population of Paris?")
        assert time.monotonic() - started < 5
    finally:
        done = threading.Event()
        threading.Thread(target=lambda: (orch.shutdown(), done.set()), daemon=True).start()
        assert done.wait(15), "shutdown hung on a dead runtime"


@pytest.mark.parametrize("bad", ["5", True, -1, float("nan"), [5]])
def test_a_timeout_that_is_not_seconds_is_refused_plainly(tmp_path, bad):
    with _orch(tmp_path) as orch:
        handle = orch.submit("Population of Paris?")
        with pytest.raises(InvalidTimeoutError, match="number of seconds") as caught:
            handle.result(timeout=bad)
        assert isinstance(caught.value, (TypeError, ValueError))
        assert handle.result(timeout=10.0).status == "accepted"
        with pytest.raises(InvalidTimeoutError):
            orch.run("Population of Paris?", timeout=bad)
