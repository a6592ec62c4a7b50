"""A ``# figure: cited`` reviewer (reflector/v9, an option for the embedded model), asked once more because its
accepted answer left out the plan's final result, must cite that step as ``{$step_N_result}`` in any answer it
writes: the request's schema says so (a grammar on the embedded server), and code writes the exact figure in."""

from __future__ import annotations

import asyncio
import re

from support import wire
from support.local import run_task

from agents import tool
from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, LLMRequest
from agents.tools.builtins.calculator import calculator


@tool
def visitors(site: str) -> int:
    """Visitors counted at a museum last month.

    Args:
        site: The museum's name.
    """
    return {"Louvre": 300, "Orsay": 120}[site]


TASK = "Which museum had more visitors, Louvre or Orsay, and by how many?"
PLAN = wire.plan(wire.step(1, "visitors", {"site": "Louvre"}), wire.step(2, "visitors", {"site": "Orsay"}),
                 wire.step(3, "calculator", {"expression": "{$step_1_result} - {$step_2_result}"}, deps=[1, 2]))
LEFT_OUT = "The Louvre had 300 visitors and Orsay 120."


def run(reflector: str, answers: list[str]) -> tuple[str | None, list[LLMRequest]]:
    reviews: list[LLMRequest] = []

    def reply(request: LLMRequest) -> str:
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return PLAN
            case _:
                reviews.append(request)
                return wire.reflection(answer=answers[min(len(reviews) - 1, len(answers) - 1)])

    config = RuntimeConfig(prompt_versions={"reflector": reflector})
    result = asyncio.run(run_task(FunctionLLM(reply), TASK, tools=[visitors, calculator], config=config))[0]
    assert result.status == "accepted"
    return result.answer, reviews


def _answer_pattern(request: LLMRequest) -> str | None:
    schema = request.json_schema or {}
    forms = schema.get("properties", {}).get("answer", {}).get("anyOf", [])
    return next((f["pattern"] for f in forms if "pattern" in f), None)


def test_the_second_look_must_cite_the_final_step_and_code_writes_its_figure_in() -> None:
    answer, reviews = run("v9", [LEFT_OUT, "The Louvre had {$step_3_result} more visitors than Orsay."])
    assert len(reviews) == 2
    assert _answer_pattern(reviews[0]) is None  # the first review writes freely
    pattern = _answer_pattern(reviews[1])
    assert pattern is not None and re.match(pattern, "by {$step_3_result}") and not re.match(pattern, "by 180")
    assert "Write {$step_3_result} in the answer where that figure goes" in reviews[1].messages[-1]["content"] + \
        reviews[1].messages[0]["content"]
    assert answer == "The Louvre had 180 more visitors than Orsay."


def test_a_reviewer_without_the_flag_is_asked_as_before() -> None:
    answer, reviews = run("v8", [LEFT_OUT, "The Louvre had 180 more visitors than Orsay."])
    assert len(reviews) == 2 and _answer_pattern(reviews[1]) is None
    assert "Write {$step_" not in "".join(str(m["content"]) for m in reviews[1].messages)
    assert answer == "The Louvre had 180 more visitors than Orsay."


def test_an_answer_that_states_the_final_figure_is_not_asked_again() -> None:
    answer, reviews = run("v9", ["The Louvre had 180 more visitors than Orsay (300 against 120)."])
    assert len(reviews) == 1 and answer == "The Louvre had 180 more visitors than Orsay (300 against 120)."
