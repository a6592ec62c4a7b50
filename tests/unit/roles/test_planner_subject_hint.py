"""A ``# subject: asked`` planner (planner/v13, an option for the embedded model) whose first plan computes with
figures no tool looked up asks the model what the task is about, and its repair round names the tools whose
descriptions say so; nothing else changes, and an unusable answer leaves the repair round as it was."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import plan_scripted, prompt_text, run_task

from agents import tool
from agents.config import RuntimeConfig
from agents.llm import LLMRequest
from agents.tools.builtins.calculator import calculator


@tool
def encyclopedia(topic: str) -> str:
    """The encyclopedia's passage about a city.

    Args:
        topic: The city's name.
    """
    return {"Leeds": "Leeds has 536,280 inhabitants.", "York": "York has 202,800 inhabitants."}[topic]


@tool
def visitors(site: str) -> int:
    """Visitors counted at a museum last month.

    Args:
        site: The museum's name.
    """
    return 1000


TASK = "How many times the inhabitants of Leeds is the inhabitants of York? Two decimals."
INVENTED = wire.plan(wire.step(1, "calculator", {"expression": "round(800000 / 200000, 2)"}))
RIGHT = wire.plan(wire.step(1, "encyclopedia", {"topic": "Leeds"}), wire.step(2, "encyclopedia", {"topic": "York"}))
HINT = "the tool whose description is about a city: encyclopedia."


def run(plans: list[str], subject: str | Exception = '{"about": "a city"}', planner: str = "v13",
        task: str = TASK) -> tuple[str, list[str], list[LLMRequest], int]:
    seen: list[str] = []
    asked: list[LLMRequest] = []

    def reply(request: LLMRequest) -> str:
        if request.metadata.get("purpose") == "subject":
            asked.append(request)
            if isinstance(subject, Exception):
                raise subject
            return subject
        seen.append(prompt_text(request))
        return plans[min(len(seen) - 1, len(plans) - 1)]

    config = RuntimeConfig(prompt_versions={"planner": planner})
    result = asyncio.run(run_task(plan_scripted(reply, answer="2.64"), task, tools=[encyclopedia, visitors, calculator],
                                  config=config))[0]
    return result.status, seen, asked, result.usage.by_role["planner"].llm_calls


def test_figures_from_nowhere_ask_what_the_task_is_about_and_the_repair_round_names_its_tool() -> None:
    status, seen, asked, calls = run([INVENTED, RIGHT])
    assert status == "accepted" and len(seen) == 2 and len(asked) == 1
    assert "Task: " + TASK in prompt_text(asked[0]) and "SAY WHAT THE TASK IS ABOUT" in prompt_text(asked[0])
    assert "figures the task does not state and no step looks up" in seen[1] and HINT in seen[1]
    assert HINT not in seen[0]
    assert calls == 3  # the planner twice and the subject question: the question is paid for


def test_a_subject_no_tool_describes_adds_nothing_to_the_note() -> None:
    status, seen, asked, _ = run([INVENTED, RIGHT], subject='{"about": "a planet"}')
    assert status == "accepted" and len(asked) == 1
    assert "figures the task does not state" in seen[1] and "whose description is about" not in seen[1]


def test_an_unusable_answer_twice_leaves_the_repair_round_as_it_was() -> None:
    status, seen, asked, _ = run([INVENTED, RIGHT], subject="a city")
    assert status == "accepted" and len(asked) == 2  # asked once, and once more after the invalid reply
    assert "figures the task does not state" in seen[1] and "whose description is about" not in seen[1]


def test_a_failing_model_call_leaves_the_repair_round_as_it_was() -> None:
    from agents.llm.base import LLMError

    status, seen, asked, _ = run([INVENTED, RIGHT], subject=LLMError("the server went away"))
    assert status == "accepted" and len(asked) == 1 and len(seen) == 2
    assert "whose description is about" not in seen[1]


def test_other_templates_and_other_problems_do_not_ask() -> None:
    # planner/v10: the same repair round, no question
    status, seen, asked, _ = run([INVENTED, RIGHT], planner="v10")
    assert status == "accepted" and len(seen) == 2 and not asked
    # one value on both sides of '/': a blind call, but its figures are the plan's own look-ups
    self_ratio = wire.plan(wire.step(1, "encyclopedia", {"topic": "Leeds"}),
                           wire.step(2, "calculator", {"expression": "{$step_1_result} / {$step_1_result}"}, deps=[1]))
    status, seen, asked, _ = run([self_ratio, RIGHT])
    assert status == "accepted" and len(seen) == 2 and not asked
    # a right first plan: no repair round at all
    status, seen, asked, _ = run([RIGHT])
    assert status == "accepted" and len(seen) == 1 and not asked
