"""The terse reviewer (reflector/v11, the hosted profile's): its request carries the verdict grammar (sent
where the model's profile takes grammars, ``ModelProfile.grammar``), its reply is read into the wire
``Reflection``, and the policy still decides (no Ray, no model). The JSON reviewer (reflector/v10, the
small-local profile's) gets its schema instead."""

from __future__ import annotations

import asyncio

import pytest

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest, ModelProfile
from agents.llm.profile import HOSTED, SMALL_LOCAL
from agents.roles.messages import StepView
from agents.roles.reflector import Reflector
from agents.tools.builtins import calculator
from agents.tools.registry import ToolRegistry
from planning.grammar import TERSE_REFLECTION_GRAMMAR
from planning.models import Plan, PlanStep

CATALOG = ToolRegistry([calculator]).catalog_text()
PLAN = Plan(steps=[PlanStep(step_id=1, description="difference", tool_name="calculator",
                            tool_input={"expression": "2750000 - 2100000"})])
VIEWS = [StepView(step_id=1, description="difference", tool_name="calculator", status="completed", output=650000)]


def _review(profile: ModelProfile, reply: str) -> tuple[LLMRequest, object]:
    seen: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        seen.append(request)
        return reply

    options = RuntimeConfig().prompt_options()
    result = asyncio.run(Reflector(FunctionLLM(model, profile=profile), options, CATALOG).reflect(
        "t", "How many more people live in Rome than in Paris?", PLAN, VIEWS))
    return seen[0], result.value


def test_the_terse_reviewer_sends_the_verdict_grammar_and_reads_the_verdict():
    request, reflection = _review(HOSTED, "accept 5 5 4\nanswer: Rome, by 650,000.")
    assert request.grammar == TERSE_REFLECTION_GRAMMAR and request.response_format == "text"
    assert request.json_schema is None
    assert (reflection.action, reflection.answer, reflection.scores.format) == ("accept", "Rome, by 650,000.", 4)


@pytest.mark.parametrize("reply,action", [("replan 2 2 4: look Paris up", "replan"),
                                          ("retry 4 2 4 step 1: use both figures", "retry_step")])
def test_every_verdict_of_the_terse_reviewer_is_read(reply, action):
    assert _review(HOSTED, reply)[1].action == action


def test_the_json_reviewer_gets_its_schema_and_no_grammar():
    request, reflection = _review(SMALL_LOCAL, '{"scores": {"completeness": 5, "correctness": 5, "format": 5}, '
                                        '"overall_pass": true, "action": "accept", "retry_details": null, '
                                        '"feedback": "", "answer": "Rome, by 650,000."}')
    assert request.grammar is None and request.json_schema is not None
    assert reflection.action == "accept"
