"""A second review of the same results (``planning.policy.ReviewAgain``) is told what code found wrong with the
answer before, among the facts code checked: in the hosted reviewer (reflector/v11, terse) and the small-local
one (reflector/v10, JSON) alike."""

from __future__ import annotations

import asyncio

import pytest

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest, ModelProfile
from agents.llm.profile import HOSTED, SMALL_LOCAL
from agents.roles.messages import SecondLook, StepView
from agents.roles.reflector import Reflector
from planning.models import Plan, PlanStep, Reflection, Scores

PLAN = Plan(steps=[PlanStep(step_id=1, description="population of Rome", tool_name="lookup",
                            tool_input={"city": "Rome"})])
VIEWS = [StepView(1, "population of Rome", "lookup", "completed", 2.8)]
REFUSED = "The answer states 28,000,000, which no step result supports."


def _prompt(profile: ModelProfile, refused: str, fault: bool = True) -> str:
    seen: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        seen.append(request)
        return ('{"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": true, '
                '"action": "accept", "feedback": "", "answer": "2.8 million"}')

    options = RuntimeConfig().prompt_options()
    before = Reflection(scores=Scores(completeness=5, correctness=5, format=5), overall_pass=True, action="accept",
                        answer="28 million")
    again = SecondLook(refused, "wrong_answer" if fault else "low_scores", before) if refused else None
    asyncio.run(Reflector(FunctionLLM(model, profile=profile), options, "lookup: population").reflect(
        "t", "How many people live in Rome?", PLAN, VIEWS, again))
    return "\n".join(m["content"] for m in seen[0].messages)


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted", "small-local"])
def test_the_refusal_is_shown_once_and_only_when_there_is_one(profile):
    told = _prompt(profile, REFUSED)
    assert told.count("Your previous answer to these results was refused: " + REFUSED) == 1
    assert "refused" not in _prompt(profile, "")


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted", "small-local"])
def test_the_refusal_is_a_contradiction_among_the_code_checks(profile):
    told = _prompt(profile, REFUSED)
    assert "- CONTRADICTION: Your previous answer to these results was refused" in told


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=["hosted", "small-local"])
def test_an_answer_only_scored_low_is_told_so_as_a_note_not_a_contradiction(profile):
    # The reviewer's prompt says never to accept against a contradiction: an answer code found nothing wrong with
    # must not read as one.
    low = "It was scored too low to accept (completeness 3/5, needs ≥ 4), though code found nothing wrong with it."
    told = _prompt(profile, low, fault=False)
    assert "- note: Your previous answer to these results was not accepted: " + low in told
    assert "CONTRADICTION: Your previous" not in told and told.count("was not accepted: " + low) == 1
