"""The reviewer reading one line a step (reflector/v10, the small-local profile's, and v11, the hosted one's):
each step's call and its result on one fenced line, the facts code checked after them, and no plan repeated
apart (no Ray, no model)."""

from __future__ import annotations

import asyncio

import pytest

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest, ModelProfile
from agents.llm.profile import HOSTED, SMALL_LOCAL
from agents.roles.messages import StepView
from agents.roles.reflector import Reflector
from agents.tools.builtins import builtin_tools
from agents.tools.registry import ToolRegistry
from planning.models import Plan, PlanStep

TASK = "When was the Colosseum completed, and how many years before the Leaning Tower of Pisa was begun was that?"
PLAN = Plan(steps=[
    PlanStep(step_id=1, description="completion of the Colosseum", tool_name="doc_search",
             tool_input={"query": "Colosseum completed", "k": 1}),
    PlanStep(step_id=2, description="start of the Leaning Tower of Pisa", tool_name="doc_search",
             tool_input={"query": "Leaning Tower of Pisa construction began", "k": 1}),
    PlanStep(step_id=3, description="years between", tool_name="calculator", tool_input={"expression": "1173 - 72"},
             depends_on=[1, 2])])
VIEWS = [
    StepView(step_id=1, description="completion of the Colosseum", tool_name="doc_search", status="completed",
             output=[{"doc_id": "colosseum", "title": "Colosseum", "text": "Colosseum: History: construction began "
                      "under Vespasian around AD 72 and was completed under Titus in AD 80."}]),
    StepView(step_id=2, description="start of the Leaning Tower of Pisa", tool_name="doc_search", status="completed",
             output=[{"doc_id": "pisa", "title": "Leaning Tower of Pisa", "text": "Leaning Tower of Pisa: History: "
                      "construction began in 1173 and, with long pauses, ended in 1372."}]),
    StepView(step_id=3, description="years between", tool_name="calculator", status="completed", output=1101)]


def _review(profile: ModelProfile, reply: str) -> LLMRequest:
    seen: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        seen.append(request)
        return reply

    catalog = ToolRegistry(builtin_tools()).catalog_text()
    # The clause check below is the numeric set's ("Compute with 80"): asked for explicitly.
    options = RuntimeConfig(builtin_checks=("sound", "numeric")).prompt_options()
    asyncio.run(Reflector(FunctionLLM(model, profile=profile), options, catalog).reflect("t", TASK, PLAN, VIEWS))
    return seen[0]


JSON_ACCEPT = ('{"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": true, '
               '"action": "accept", "retry_details": null, "feedback": "", "answer": "AD 80, 1,093 years before."}')


@pytest.mark.parametrize("profile", [SMALL_LOCAL, HOSTED], ids=["small-local", "hosted"])
def test_each_step_is_one_line_with_its_call_and_result_and_the_plan_is_not_repeated(profile):
    request = _review(profile, JSON_ACCEPT)
    user = request.messages[-1]["content"]
    assert "Plan:" not in user and "Steps:" in user
    lines = [line for line in user.splitlines() if line.startswith("#")]
    assert len(lines) == 3
    assert '("Colosseum completed", 1)' in lines[0] and "completed under Titus in AD 80" in lines[0]
    assert '("1173 - 72") after $1, $2' in lines[2] and lines[2].endswith("→ 1101")
    # what code checked comes after the steps: here that 72 is the start, not the completion
    checks = user[user.index("Checked by code:"):]
    assert "CONTRADICTION" in checks and "Compute with 80" in checks
    # the system prompt says how to read the lines (it is static, so the server's prompt cache keeps it)
    assert '"#N tool status (arguments) → output"' in request.messages[0]["content"]


def test_the_small_local_profile_reads_one_line_a_step_and_answers_in_json():
    assert SMALL_LOCAL.prompt("reflector") == "v10" and SMALL_LOCAL.reply_form("reflector") == "json"
    request = _review(SMALL_LOCAL, JSON_ACCEPT)
    assert request.json_schema is not None and request.grammar is None
    assert '"#N tool status (arguments) → output"' in request.messages[0]["content"]
