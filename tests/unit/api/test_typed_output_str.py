"""``output_type=str``: the answer is the string itself. In the JSON reply form the reply schema's ``answer`` is
``{"type": "string"}``, so a model (and the embedded model's grammar) writes the name as a JSON string, which
arrives as plain text; it must validate as the string, not be refused as "not JSON" (found by the generality
suite's typed run: every task whose answer is one name escalated on the small local profile)."""

from __future__ import annotations

import json

import pytest

from agents import Orchestrator, RuntimeConfig, tool
from agents.llm import FunctionLLM, LLMRequest
from agents.llm.profile import HOSTED, SMALL_LOCAL, ModelProfile
from agents.outputs import output_spec, validate_output


@tool(permission="read")
def population(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    return {"paris": 2.1, "rome": 2.8}[city.lower()]


def _reply(answer, profile: ModelProfile):
    def reply(request: LLMRequest) -> str:
        if request.role == "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "needs lookups", "answer": None})
        if request.role == "planner":
            return json.dumps({"steps": [
                {"step_id": i, "description": c, "tool_name": "population", "tool_input": {"city": c},
                 "depends_on": []} for i, c in ((1, "Paris"), (2, "Rome"))]})
        if profile.reply_form("reflector") == "terse":
            return f"accept 5 5 5\nanswer: {answer}"
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "", "answer": answer})
    return reply


@pytest.mark.parametrize(("profile", "written"), [(SMALL_LOCAL, "Rome"), (HOSTED, '"Rome"'), (HOSTED, "Rome")],
                         ids=["json-form-value", "terse-json-text", "terse-bare-name"])
def test_a_string_output_is_the_name_the_reviewer_wrote(tmp_path, profile, written):
    orch = Orchestrator(llm=FunctionLLM(_reply(written, profile), profile=profile), tools=[population],
                        config=RuntimeConfig(store_path=tmp_path / "t.db"), runtime="inprocess")
    try:
        result = orch.run("Which is bigger, Paris or Rome?", timeout=30, output_type=str)
    finally:
        orch.shutdown()
    assert (result.status, result.output) == ("accepted", "Rome"), (result.stopped_reason, result.question)


def test_only_a_string_schema_takes_bare_text():
    assert validate_output(output_spec(str, importable=True), "Rome") == "Rome"
    assert validate_output(output_spec(str, importable=True), '"Rome"') == "Rome"
    with pytest.raises(ValueError, match="not JSON"):
        validate_output(output_spec(list[str], importable=True), "Rome")
