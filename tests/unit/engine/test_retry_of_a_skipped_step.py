"""A reviewer's retry of a step that cannot be retried as it is (skipped behind a failed dependency) maps to a
legal transition: the failed step it waits on is retried, with the reviewer's modification. Issue 60 item 13: the
task failed with "internal error … please report this bug" (InvalidTransitionError)."""

from __future__ import annotations

import json

from agents import Orchestrator, RuntimeConfig, tool
from agents.llm import FunctionLLM, LLMRequest

CALLS: list[str] = []


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    CALLS.append(city)
    if len(CALLS) == 1:
        raise ValueError("the census archive is offline")
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


@tool(permission="read")
def double(x: float) -> float:
    """Twice x.

    Args:
        x: A number.
    """
    return 2 * x


def script(request: LLMRequest) -> str:
    if request.role == "router":
        return json.dumps({"route": "plan", "confidence": 0.9, "reason": "lookup", "answer": None})
    if request.role == "planner":
        return json.dumps({"steps": [
            {"step_id": 1, "description": "Paris", "tool_name": "population", "tool_input": {"city": "Paris"},
             "depends_on": []},
            {"step_id": 2, "description": "double", "tool_name": "double", "tool_input": {"x": "$step_1_result"},
             "depends_on": [1]}]})
    if request.role == "executor":  # the retried call, rewritten as the reviewer asked
        return json.dumps({"city": "Paris"})
    if "4.2" in json.dumps(request.messages):
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "", "answer": "4.2 million"})
    return json.dumps({"scores": {"completeness": 1, "correctness": 1, "format": 3}, "overall_pass": False,
                       "action": "retry_step", "retry_details": {"step_id": 2, "modification": "try again"},
                       "feedback": "step 2 did not run", "answer": None})


def test_a_retry_of_a_skipped_step_retries_the_failed_step_it_waits_on(tmp_path):
    CALLS.clear()
    with Orchestrator(llm=FunctionLLM(script), tools=[population, double], runtime="inprocess",
                      config=RuntimeConfig(store_path=tmp_path / "t.db", tools={"max_attempts": 1})) as orch:
        handle = orch.submit("Twice the population of Paris?")
        events = list(handle.events())
        result = handle.result(timeout=30)
    assert "internal error" not in (result.error or "") and "report this bug" not in (result.error or "")
    reflected = [e.payload for e in events if e.type == "reflected"]
    assert reflected[0].decision == "retry_step"
    assert len(CALLS) == 2  # step 1, the failed step step 2 waits on, ran again
    assert result.status == "accepted" and result.answer == "4.2 million"
    assert [s.status for s in result.steps] == ["completed", "completed"]

