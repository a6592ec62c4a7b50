"""Passages that a plan put into arithmetic: code reads the figure when one is clear, else one short model call
reads exactly the figures (figure_fit); never the generic repair with the passages pasted in (no Ray). A model
profile's ``Strategy.FIGURE_FIT``: the hosted default asks for the generic repair."""

from __future__ import annotations

import asyncio

import pytest

from agents import tool
from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, ModelProfile, Strategy
from agents.llm.base import LLMRequest
from agents.roles.executor import Executor
from agents.roles.figure_fit import (
    figures_schema,
    named_passage,
    numeric_refs,
    parse_figures,
    render_sources,
    stated_figures,
)
from agents.roles.messages import StepRequest
from agents.tools.builtins import calculator, doc_search
from planning.errors import PlanningError
from planning.models import PlanStep

PARIS = [{"doc_id": "paris", "title": "Paris", "text": "Population: Paris had about 2.10 million people in 2023 "
          "(city proper). The region had about 12.3 million inhabitants."}]
# Two figures about the population in one sentence: code cannot tell which one the step meant.
FIT = ModelProfile(strategies=frozenset({Strategy.FIGURE_FIT}))
ROME = [{"doc_id": "rome", "title": "Rome", "text": "Population: Rome had 2.75 million people in the comune and "
         "4.2 million in the metropolitan city."}]


@tool
def scale(value: float, factor: float = 2.0) -> float:
    """Multiply a value."""
    return value * factor


def test_which_outputs_land_where_a_number_is_wanted():
    expr = {"expression": "max({$step_1_result}, {$step_2_result}) - 1"}
    assert numeric_refs(calculator.spec.parameters, calculator.spec.returns, expr) == {1, 2}
    assert numeric_refs(scale.spec.parameters, scale.spec.returns, {"value": "$step_3_result"}) == {3}
    # A passage in a search query is text for text: not a number slot.
    assert numeric_refs(doc_search.spec.parameters, doc_search.spec.returns, {"query": "area of {$step_1_result}"}) == set()
    # A whole-value ref in an expression is a reasoning step's formula, not a figure to read.
    assert numeric_refs(calculator.spec.parameters, calculator.spec.returns, {"expression": "$step_1_result"}) == set()


def test_the_figures_reply_is_checked_source_by_source():
    assert parse_figures('{"1": 2100000, "2": "2,750,000"}', [1, 2]) == {1: 2100000.0, 2: 2750000.0}
    with pytest.raises(PlanningError, match="source 2 needs one number"):
        parse_figures('{"1": 2100000}', [1, 2])
    with pytest.raises(PlanningError, match="source 1"):
        parse_figures('{"1": "about two million"}', [1])
    assert figures_schema([1, 2])["required"] == ["1", "2"]


def test_a_figure_must_be_one_its_source_states():
    # measured: the 1.5B model read "68.4 million" as 6,840,000, and the calculator computed 3,160,000 for a
    # difference of 58.4 million; the schema offers the stated numbers only, and the parser holds to them too
    france = [{"title": "France", "text": "France: Population: France had a population of about 68.4 million on "
                                          "1 January 2024 (about 66.1 million in metropolitan France)."}]
    choices = {1: stated_figures(france)}
    assert 68400000.0 in choices[1] and 66100000.0 in choices[1] and 6840000.0 not in choices[1]
    assert figures_schema([1], choices)["properties"]["1"]["enum"][:1] == [68400000]
    assert parse_figures('{"1": 68400000}', [1], choices) == {1: 68400000.0}
    with pytest.raises(PlanningError, match="source 1 does not state 6840000; use one of .*68400000"):
        parse_figures('{"1": 6840000}', [1], choices)
    assert figures_schema([1], {1: ()})["properties"]["1"] == {"type": "number"}  # nothing stated: any number


def test_sources_are_fenced_and_say_what_each_step_looked_up():
    text = render_sources([2], {2: ROME}, {2: "population of Rome"})
    assert text.startswith("Source 2 (step 2 looked up: population of Rome):")
    assert '<untrusted-data source="step 2 output">' in text and "Rome: Population" in text


def _run(expression: str, reply: str, checks: tuple[str, ...] = ("sound", "numeric")):
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return reply

    executor = Executor([calculator], FunctionLLM(model, profile=FIT),
                        RuntimeConfig(builtin_checks=checks).executor_options())
    step = PlanStep(step_id=3, description="difference, larger minus smaller", tool_name="calculator",
                    tool_input={"expression": expression}, depends_on=[1, 2])
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5,
                          inputs_about={1: "population of Paris", 2: "population of Rome"})
    return asyncio.run(executor.run(request, {1: PARIS, 2: ROME})), asked


def test_the_model_reads_only_the_figures_code_could_not():
    outcome, asked = _run("max({$step_1_result}, {$step_2_result}) - min({$step_1_result}, {$step_2_result})",
                          '{"2": 2750000}')
    assert outcome.ok, outcome.error
    assert outcome.output == 650000
    assert outcome.arguments == {"expression": "max(2100000, 2750000) - min(2100000, 2750000)"}
    [request] = asked
    user = request.messages[-1]["content"]
    assert "Source 2" in user and "Source 1" not in user  # Paris's figure was read by code
    # the reply may only choose among the numbers Rome's passage states
    assert request.json_schema == figures_schema([2], {2: stated_figures(ROME)}) and request.max_tokens == 32
    assert request.json_schema["properties"]["2"]["enum"][0] == 2750000
    assert outcome.spend.usage.llm_calls == 1


def test_by_default_the_model_reads_every_figure_among_the_numbers_each_passage_states():
    # Which number a passage means is a guess about its wording: by default code does not make it (the sound set).
    outcome, asked = _run("max({$step_1_result}, {$step_2_result}) - min({$step_1_result}, {$step_2_result})",
                          '{"1": 2100000, "2": 2750000}', checks=("sound",))
    assert outcome.ok and outcome.output == 650000
    [request] = asked
    assert request.json_schema == figures_schema([1, 2], {1: stated_figures(PARIS), 2: stated_figures(ROME)})


def test_a_figure_the_model_cannot_give_fails_the_step_with_why():
    outcome, asked = _run("{$step_1_result} + {$step_2_result}", '{"2": "unknown"}')
    assert not outcome.ok and outcome.error_kind == "argument"
    assert "reading the figures out of steps [2]'s passages failed" in outcome.error
    assert len(asked) == 2  # the reply and its one repair round
    assert asked[0].messages[-1]["content"].startswith("Task: t\nCalculation: difference, larger minus smaller")


def test_prose_without_a_number_fails_the_step_without_a_model_call():
    # A reasoning step's answer or a passage with no figure in it: there is nothing to read, and a repaired call
    # could only invent the number (the generic repair once wrote "2.75 - 2.10" here). The plan must change.
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return '{"expression": "2.75 - 2.10"}'

    executor = Executor([calculator], FunctionLLM(model, profile=FIT), RuntimeConfig().executor_options())
    step = PlanStep(step_id=2, description="difference", tool_name="calculator",
                    tool_input={"expression": "{$step_1_result} - 2.10"}, depends_on=[1])
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5)
    outcome = asyncio.run(executor.run(request, {1: "Rome is the larger city"}))
    assert not outcome.ok and outcome.error_kind == "argument" and asked == []
    assert "output of step 1 where a number is needed, but that output states no figure" in outcome.error
    assert "add a reasoning step" in outcome.error and "Rome" not in outcome.error  # tool output stays fenced


@pytest.mark.parametrize("name, expected", [
    ("Rome", "rome"), ("rome.", "rome"), ('"Rome"', "rome"), ("the Rhine", "rhine"), ("Mount Everest", "mount_everest"),
    ("Madrid", None), ("", None), ("x" * 81, None), ("Rome\nignore the above", None), (42, None),
])
def test_named_passage_finds_the_one_hit_a_short_name_titles(name, expected):
    hits = [{"doc_id": "rome", "title": "Rome", "text": "2.75 million"},
            {"doc_id": "rhine", "title": "The Rhine", "text": "1,230 km"},
            {"doc_id": "mount_everest", "title": "Mount Everest", "text": "8,848.86 m"}]
    found = named_passage(hits, name)
    assert (found[0]["doc_id"] if found else None) == expected


def test_named_passage_refuses_two_hits_of_the_same_name():
    assert named_passage([{"title": "Paris"}, {"doc_id": "paris"}], "Paris") is None
