"""The reviewer may cite a step's output in its answer as ``{$step_N_result}``; the role fills in the exact value
(``agents.roles.reflector.filled_answer``), and leaves what it cannot fill for the sound check to refuse."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.checks.review import review_context
from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest, ModelProfile
from agents.llm.profile import HOSTED
from agents.roles.messages import StepView
from agents.roles.reflector import Reflector
from planning.models import Plan, PlanStep

PLAN = Plan(steps=[
    PlanStep(step_id=1, description="visitors of A", tool_name="visitors", tool_input={"site": "A"}),
    PlanStep(step_id=2, description="visitors of B", tool_name="visitors", tool_input={"site": "B"}),
    PlanStep(step_id=3, description="difference", tool_name="calculator",
             tool_input={"expression": "$step_1_result - $step_2_result"}, depends_on=[1, 2])])
TASK = "Which site had more visitors, A or B, and by how many?"
JSON_REVIEWER = ModelProfile(prompts={"reflector": "v10"},
                             reply_forms={**HOSTED.reply_forms, "reflector": "json"})
"""The hosted profile with the JSON reviewer (reflector/v10): filling in is the role's, whatever the form."""
PROFILES = pytest.mark.parametrize("profile", [HOSTED, JSON_REVIEWER], ids=["terse", "json"])


def _review(answer: str, views: list[StepView], task: str = TASK, profile: ModelProfile = HOSTED):
    def model(request: LLMRequest) -> str:
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "", "answer": answer})

    options = RuntimeConfig().prompt_options()
    reflector = Reflector(FunctionLLM(model, profile=profile), options, "visitors: site\ncalculator: expression")
    return asyncio.run(reflector.reflect("t", task, PLAN, views)).value


def _views(third: str = "completed") -> list[StepView]:
    return [StepView(1, "visitors of A", "visitors", "completed", 142870),
            StepView(2, "visitors of B", "visitors", "completed", 88321),
            StepView(3, "difference", "calculator", third, 54549 if third == "completed" else None)]


@PROFILES
def test_the_answer_gets_the_cited_outputs_exactly(profile):
    reflection = _review("A, by {$step_3_result} visitors ({$step_1_result} against $step_2_result).", _views(),
                         profile=profile)
    assert reflection.answer == "A, by 54549 visitors (142870 against 88321)."
    assert review_context(reflection, TASK, _views(), PLAN).contradictions == ()


@PROFILES
def test_a_reference_to_a_step_that_did_not_complete_is_refused_not_filled(profile):
    views = _views("failed")
    reflection = _review("A, by {$step_3_result} visitors.", views, profile=profile)
    assert reflection.answer == "A, by {$step_3_result} visitors."
    assert any("never filled in" in c for c in review_context(reflection, TASK, views, PLAN).contradictions)


@PROFILES
def test_nothing_is_filled_when_a_result_writes_a_reference_itself(profile):
    views = [*_views()[:2], StepView(3, "template", "render", "completed", "Hello {$step_1_result}")]
    assert _review("It renders {$step_1_result}.", views, profile=profile).answer == "It renders {$step_1_result}."
