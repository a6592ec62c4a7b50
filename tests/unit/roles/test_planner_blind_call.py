"""A planned call whose result cannot depend on the task (the tool's documented example copied, ``x / x``) is
asked about once in the planner's repair round; the repaired plan's word stands, and ordinary calls pass. A
model profile's ``Strategy.BLIND_CALLS``: the hosted default makes no extra planner call."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import plan_scripted, prompt_text, run_task

from agents import tool
from agents.llm import HOSTED, LLMRequest, ModelProfile, Strategy
from agents.tools.builtins.calculator import calculator


@tool
def balance(customer_id: str) -> float:
    """A customer's balance in EUR.

    Args:
        customer_id: The customer's id, e.g. "C-1042".
    """
    return {"A-7": 300.0, "B-9": 120.0}[customer_id]


TASK = "How many times the balance of B-9 is the balance of A-7? Two decimals."
EXAMPLE = "round(10 / 4, 2)"
RIGHT = wire.plan(wire.step(1, "balance", {"customer_id": "A-7"}), wire.step(2, "balance", {"customer_id": "B-9"}),
                  wire.step(3, "calculator", {"expression": "{$step_1_result} / {$step_2_result}"}, deps=[1, 2]))
SELF_RATIO = wire.plan(wire.step(1, "balance", {"customer_id": "A-7"}),
                       wire.step(2, "calculator", {"expression": "{$step_1_result} / {$step_1_result}"}, deps=[1]))
COPIED = wire.plan(wire.step(1, "calculator", {"expression": EXAMPLE}))
BLIND = ModelProfile(strategies=frozenset({Strategy.BLIND_CALLS}))


def run(plans: list[str], task: str = TASK, profile: ModelProfile = BLIND) -> tuple[str, list[str]]:
    seen: list[str] = []

    def planner(request: LLMRequest) -> str:
        seen.append(prompt_text(request))
        return plans[min(len(seen) - 1, len(plans) - 1)]

    llm = plan_scripted(planner, answer="2.5", profile=profile)
    result = asyncio.run(run_task(llm, task, tools=[balance, calculator]))[0]
    return result.status, seen


def test_the_documented_example_copied_is_asked_about_and_the_repaired_plan_runs() -> None:
    status, seen = run([COPIED, RIGHT])
    assert status == "accepted" and len(seen) == 2
    assert "step 1 gives calculator the example from calculator's own description" in seen[1]
    # the repair round's catalog shows no example of the calculator, so there is none to copy again
    assert EXAMPLE in seen[0] and EXAMPLE not in seen[1] and "balance(customer_id: str)" in seen[1]


def test_one_value_on_both_sides_of_a_division_is_asked_about() -> None:
    status, seen = run([SELF_RATIO, RIGHT])
    assert status == "accepted" and len(seen) == 2
    assert "one value on both sides of '/'" in seen[1]


def test_the_planner_is_asked_once_and_its_second_answer_stands() -> None:
    status, seen = run([COPIED])
    assert status == "accepted" and len(seen) == 2


def test_a_hosted_model_is_not_asked_about_a_blind_call() -> None:
    status, seen = run([COPIED, RIGHT], profile=HOSTED)
    assert status == "accepted" and len(seen) == 1


def test_a_task_that_writes_the_examples_figures_is_not_asked_about() -> None:
    status, seen = run([COPIED], task=f"What is {EXAMPLE}?")
    assert status == "accepted" and len(seen) == 1


def test_an_ordinary_plan_is_not_asked_about() -> None:
    status, seen = run([RIGHT])
    assert status == "accepted" and len(seen) == 1


def test_the_digits_of_the_tasks_ids_used_as_figures_are_asked_about() -> None:
    # The task writes 7 and 9 only inside the ids A-7 and B-9: the checks' number reader says they are no figure.
    codes = wire.plan(wire.step(1, "calculator", {"expression": "round(9 / 7, 2)"}))
    status, seen = run([codes, RIGHT])
    assert status == "accepted" and len(seen) == 2
    assert "step 1 computes with 9 and 7, figures the task does not state and no step looks up" in seen[1]


def test_arithmetic_on_the_figures_the_task_states_is_not_asked_about() -> None:
    stated = wire.plan(wire.step(1, "calculator", {"expression": "round(1971689 / 2.5, 2)"}))
    status, seen = run([stated], task="Berlin hat 1.971.689 Einwohner. Wie viel ist ein Zweieinhalbtel, 2,5?")
    assert status == "accepted" and len(seen) == 1
