"""One size limit for every text a user or a model sends in (docs/reliability.md, "Text limits"): a user's text
over it is refused at once with a typed error naming the limit; a model's or a check's text is cut to it with a
marker, and the task goes on without stalling anyone (issue 60 item 7: ``Reject("X" * 2_000_000)`` stopped the
Supervisor's loop for ~21 s and stored a 5 MB result)."""

from __future__ import annotations

import json
import time

import pytest

from agents import Orchestrator, RuntimeConfig, tool
from agents.checks import AnswerReview, Reject
from agents.errors import ConfigError, TextTooLongError
from agents.llm import FunctionLLM, LLMRequest
from planning.text_limits import MAX_TEXT_CHARS

HUGE = 2_000_000


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


def script(*, answer: str = "2.1 million", first: str = "accept", reasoning: bool = False):
    seen: list[str] = []

    def reply(request: LLMRequest) -> str:
        if request.role == "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "lookup", "answer": None})
        if request.role == "planner":
            step = ({"tool_name": None, "tool_input": {}} if reasoning else
                    {"tool_name": "population", "tool_input": {"city": "Paris"}})
            return json.dumps({"steps": [{"step_id": 1, "description": "Paris", "depends_on": [], **step}]})
        if request.role == "executor":
            return "word " * 40_000  # 200,000 characters: over the limit, within the token budget
        seen.append(request.role)
        action = first if len(seen) == 1 else "accept"
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": action, "retry_details": None, "feedback": "need a human",
                           "answer": answer})
    return reply


def _orch(tmp_path, llm, checks=()):
    return Orchestrator(llm=FunctionLLM(llm), tools=[population], runtime="inprocess", checks=list(checks),
                        config=RuntimeConfig(store_path=tmp_path / "t.db", max_replans=0))


def test_a_huge_task_is_refused_at_once_naming_the_limit(tmp_path):
    with _orch(tmp_path, script()) as orch:
        started = time.monotonic()
        with pytest.raises(TextTooLongError, match="MAX_TEXT_CHARS") as caught:
            orch.submit("X" * HUGE)
        assert time.monotonic() - started < 1.0  # no token counting on the whole text
    assert isinstance(caught.value, ConfigError) and caught.value.limit == MAX_TEXT_CHARS


def test_a_huge_response_is_refused_and_the_task_still_waits(tmp_path):
    with _orch(tmp_path, script(first="escalate")) as orch:
        first = orch.submit("Population of Paris?").result(timeout=10)
        assert first.status == "escalated"
        with pytest.raises(TextTooLongError, match=f"{HUGE} characters.*{MAX_TEXT_CHARS}"):
            orch.respond(first.task_id, "x" * HUGE)
        assert orch.respond(first.task_id, "go on").result(timeout=10).status == "accepted"


def test_a_huge_reject_reason_is_cut_and_stalls_nothing(tmp_path):
    def refuses(review: AnswerReview) -> None:
        raise Reject("X" * HUGE)

    with _orch(tmp_path, script(), checks=[refuses]) as orch:
        started = time.monotonic()
        result = orch.submit("Population of Paris?").result(timeout=20)
        assert time.monotonic() - started < 8
    assert result.status in ("escalated", "failed")
    message = result.reflections[0].checks[0].message
    assert len(message) < MAX_TEXT_CHARS + 200 and "MAX_TEXT_CHARS" in message
    assert len(result.model_dump_json()) < 8 * MAX_TEXT_CHARS


def test_a_huge_answer_and_a_huge_reasoning_output_are_cut_with_a_marker(tmp_path):
    with _orch(tmp_path, script(answer="word " * 40_000, reasoning=True)) as orch:
        result = orch.submit("Population of Paris?").result(timeout=30)
    assert result.status == "accepted"
    assert len(result.answer) < MAX_TEXT_CHARS + 200 and result.answer.endswith("(MAX_TEXT_CHARS)]")
    output = result.steps[0].output
    assert isinstance(output, str) and len(output) < MAX_TEXT_CHARS + 200 and "MAX_TEXT_CHARS" in output
