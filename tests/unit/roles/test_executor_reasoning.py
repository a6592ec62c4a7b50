"""A reasoning step (no tool) is answered by the model with the executor prompt: the embedded model's form
(executor/v3, ``SMALL_LOCAL``) opens with the same text as the other roles' prompts — the tool list — so
llama.cpp reuses the prefill of the previous call (no Ray)."""

from __future__ import annotations

import asyncio

from agents import tool
from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, ModelProfile
from agents.llm.base import LLMRequest
from agents.roles.executor import Executor
from agents.roles.messages import StepRequest
from agents.tools import ToolRegistry
from planning.models import PlanStep
from prompts import load_prompt


@tool
def population(city: str) -> float:
    """Population of a city, in millions."""
    return 2.1


def _reason(profile: ModelProfile) -> tuple[str, list[LLMRequest]]:
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return "2100000"

    executor = Executor([population], FunctionLLM(model, profile=profile), RuntimeConfig().executor_options())
    step = PlanStep(step_id=2, description="the population of Paris as a number", tool_name=None, depends_on=[1])
    request = StepRequest(task_id="t", task="How many people live in Paris?", plan_version=1, step=step, attempt=1,
                          timeout_s=5)
    outcome = asyncio.run(executor.run(request, {1: "Paris had about 2.10 million people in 2023."}))
    assert outcome.ok, outcome.error
    return outcome.output, asked


def test_the_embedded_form_opens_like_the_router_and_carries_the_inputs():
    output, asked = _reason(SMALL_LOCAL)
    assert output == "2100000" and len(asked) == 1
    system, user = (m["content"] for m in asked[0].messages)
    catalog = ToolRegistry([population]).catalog_text()
    router = load_prompt("router", SMALL_LOCAL.prompt("router")).render(
        tools=catalog, task="x", history="").messages[0]["content"]
    opening = load_prompt("opening", "v1").render(tools=catalog).messages[0]["content"]
    assert system.startswith(opening) and router.startswith(opening)
    assert "2.10 million" in user and "number alone" in system


def test_the_default_form_is_unchanged():
    _, asked = _reason(HOSTED)
    assert "population(" not in asked[0].messages[0]["content"], "executor/v1 carries no tool list"
