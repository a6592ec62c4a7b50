"""The user's checks through the public API without Ray (``runtime="inprocess"``), as a user's own tests would
pin them."""

from __future__ import annotations

import json

from agents import Orchestrator, RuntimeConfig, tool
from agents.checks import AnswerReview, Reject
from agents.llm import FunctionLLM, LLMRequest


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


def script(answers: list[str]):
    def reply(request: LLMRequest) -> str:
        if request.role == "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "needs lookups", "answer": None})
        if request.role == "planner":
            return json.dumps({"steps": [
                {"step_id": i, "description": c, "tool_name": "population", "tool_input": {"city": c},
                 "depends_on": []} for i, c in ((1, "Paris"), (2, "Rome"))]})
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "", "answer": answers.pop(0)})
    return reply


def gives_both_figures(review: AnswerReview) -> None:
    missing = [str(s.output) for s in review.steps if str(s.output) not in (review.answer or "")]
    if missing:
        raise Reject(f"the answer must give every looked-up figure; missing: {', '.join(missing)}")


def test_a_users_check_refuses_then_accepts_in_process(tmp_path):
    orch = Orchestrator(llm=FunctionLLM(script(["Rome is bigger", "Rome: 2.8 million, Paris: 2.1 million"])),
                        tools=[population], config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        runtime="inprocess", checks=[gives_both_figures])
    try:
        handle = orch.submit("Which is bigger, Paris or Rome?")
        events = list(handle.events())
        result = handle.result(timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == "Rome: 2.8 million, Paris: 2.1 million"
    refused = result.reflections[0].checks
    assert [(f.check, f.source) for f in refused] == [("gives_both_figures", "user")]
    assert "missing: 2.1, 2.8" in refused[0].message
    assert [e.payload.decision for e in events if e.type == "reflected"] == ["review_again", "accept"]


def test_a_check_returning_false_fails_the_task_naming_it(tmp_path):
    """Issue 60: a check returning ``False`` let the answer through silently."""

    def names_berlin(review: AnswerReview) -> bool:
        return "Berlin" in (review.answer or "")

    orch = Orchestrator(llm=FunctionLLM(script(["Rome is bigger"])), tools=[population],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess",
                        checks=[names_berlin])
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30)
    finally:
        orch.shutdown()
    assert result.status == "failed" and result.stopped_reason == "check_failed"
    assert "the answer check 'names_berlin' returned False (bool)" in result.error
    assert "raises agents.checks.Reject('why') to refuse" in result.error
