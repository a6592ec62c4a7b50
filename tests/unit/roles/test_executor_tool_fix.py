"""A tool that names the right value (``ToolArgumentError(fix=...)``) is retried with it by the executor at
once for a read tool — no model call, no replan — and never for a write tool (no Ray). Passages where a tool
wants numbers are fitted (``Strategy.FIGURE_FIT``) only for a model whose profile turns it on."""

from __future__ import annotations

import asyncio

from agents import tool
from agents.config import RuntimeConfig

NUMERIC = ("sound", "numeric")
from agents.llm import HOSTED, FunctionLLM, ModelProfile, Strategy
from agents.llm.base import LLMRequest
from agents.roles.executor import Executor
from agents.roles.messages import StepRequest
from agents.tools.errors import ToolArgumentError
from planning.models import PlanStep

CALLS: list[tuple[str, str]] = []
FIT = ModelProfile(strategies=frozenset({Strategy.FIGURE_FIT}))


@tool
def population(entity: str) -> float:
    """Population of a place, in millions."""
    CALLS.append(("population", entity))
    if entity != "Dalwynbre":
        raise ToolArgumentError(f"unknown entity {entity!r}; did you mean 'Dalwynbre'?", fix={"entity": "Dalwynbre"})
    return 3.96


@tool(permission="write")
def rename(entity: str) -> str:
    """Rename a record."""
    CALLS.append(("rename", entity))
    if entity != "Dalwynbre":
        raise ToolArgumentError(f"unknown entity {entity!r}", fix={"entity": "Dalwynbre"})
    return "renamed"


def _run(tool_name: str, model_args: str = '{"entity": "Dalwynbre"}'):
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return model_args

    CALLS.clear()
    executor = Executor([population, rename], FunctionLLM(model), RuntimeConfig().executor_options())
    step = PlanStep(step_id=1, description="x", tool_name=tool_name, tool_input={"entity": "Dalwynbrx"})
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5)
    return asyncio.run(executor.run(request, {})), asked


def test_a_read_tool_is_retried_with_its_own_fix_without_a_model_call():
    outcome, asked = _run("population")
    assert outcome.ok and outcome.output == 3.96
    assert outcome.arguments == {"entity": "Dalwynbre"}  # the call that ran is on record
    assert CALLS == [("population", "Dalwynbrx"), ("population", "Dalwynbre")]
    assert asked == [] and outcome.spend.usage.llm_calls == 0


def test_a_write_tool_is_never_rewritten_by_a_fix_only_by_the_repair_round():
    outcome, asked = _run("rename")
    assert outcome.ok and [r.role for r in asked] == ["executor"]
    assert CALLS == [("rename", "Dalwynbrx"), ("rename", "Dalwynbre")]


PARIS = [{"doc_id": "paris", "title": "Paris", "text": "Paris: Population: Paris had a population of about 2.10 "
          "million in 2023 (city proper). The wider region had about 12.3 million inhabitants."}]
ROME = [{"doc_id": "rome", "title": "Rome", "text": "Rome: Population: Rome had a population of about 2.75 million in "
         "2023 (comune of Rome)."}]


def _calculate(inputs: dict, about: dict, model_reply: str = '{"expression": "1"}', through: dict | None = None,
               profile: ModelProfile = FIT):
    from agents.tools.builtins import calculator

    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return model_reply

    step = PlanStep(step_id=3, description="difference", tool_name="calculator",
                    tool_input={"expression": "max({$step_1_result}, {$step_2_result}) - min({$step_1_result}, "
                                              "{$step_2_result})"}, depends_on=[1, 2])
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5,
                          inputs_about=about, read_through=through or {})
    # Code reads a passage's figure only with the opt-in numeric check set (docs/checks.md).
    executor = Executor([calculator], FunctionLLM(model, profile=profile),
                        RuntimeConfig(builtin_checks=NUMERIC).executor_options())
    return asyncio.run(executor.run(request, inputs)), asked


def test_passages_with_one_relevant_number_each_reach_the_calculator_as_numbers_without_a_model_call():
    outcome, asked = _calculate({1: PARIS, 2: ROME}, {1: "population of Paris", 2: "population of Rome"})
    assert outcome.ok and outcome.output == 650000
    assert outcome.arguments == {"expression": "max(2100000, 2750000) - min(2100000, 2750000)"}
    assert asked == []


def test_a_hosted_model_rewrites_the_call_itself_and_no_figure_is_fitted():
    outcome, asked = _calculate({1: PARIS, 2: ROME}, {1: "population of Paris", 2: "population of Rome"},
                                profile=HOSTED)
    (repair,) = asked  # the argument repair, asked for the calculator's own arguments, not for figures
    assert repair.json_schema is not None and repair.json_schema["required"] == ["expression"]
    assert outcome.ok and outcome.arguments == {"expression": "1"}  # the model's own repair, not code's figures


def test_a_passage_whose_number_is_not_clear_goes_to_the_model_for_its_figure():
    # "Paris" alone says nothing about which figure is meant: one model call reads the figures (figure_fit).
    outcome, asked = _calculate({1: PARIS, 2: ROME}, {1: "Paris", 2: "Rome"}, '{"1": 2100000, "2": 2750000}')
    assert len(asked) == 1 and asked[0].json_schema["required"] == ["1", "2"]
    assert outcome.ok and outcome.output == 650000


def test_a_figure_read_in_millions_is_not_one_the_passage_states():
    # "2.10 million" read as 2.1: the calculator would mix scales with a figure read in full. The reply may only
    # hold the numbers as the passages state them; the repair round says which, and the step fails after it.
    outcome, asked = _calculate({1: PARIS, 2: ROME}, {1: "Paris", 2: "Rome"}, '{"1": 2.1, "2": 2.75}')
    assert len(asked) == 2 and "does not state 2.1" in asked[1].messages[-1]["content"]
    assert not outcome.ok and outcome.error_kind == "argument"


BOTH = PARIS + ROME  # one search for both cities: its hits, best first


def test_a_reasoning_step_that_answered_a_name_is_read_through_to_that_names_passage():
    # Steps 1 and 2 are reasoning steps that read one search (step 5 here) and answered "Paris" and "Rome"
    # where the calculator needs their populations: each figure comes from the hit of that name, no model call.
    outcome, asked = _calculate({1: "Paris", 2: "Rome.", 5: BOTH},
                                {1: "the city", 2: "the other city", 5: "population of Paris and Rome"},
                                through={1: 5, 2: 5})
    assert outcome.ok and outcome.output == 650000
    assert outcome.arguments == {"expression": "max(2100000, 2750000) - min(2100000, 2750000)"}
    assert asked == []


def test_a_name_no_hit_carries_still_fails_the_step_with_what_to_do():
    # "Madrid" names none of the hits: there is no sound figure, so the no-figure rule stands.
    outcome, asked = _calculate({1: "Madrid", 2: ROME, 5: BOTH}, {1: "capital", 2: "population of Rome", 5: "x"},
                                through={1: 5})
    assert not outcome.ok and outcome.error_kind == "argument" and "states no figure" in outcome.error
    # step 1 answered a name: the planner is told to search for the figure with it, and where to use it
    assert 'its query is "{$step_1_result}"' in outcome.error and "instead of step 1's" in outcome.error
    assert asked == []
