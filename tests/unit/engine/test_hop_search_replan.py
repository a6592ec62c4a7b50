"""A name hop handed to the calculator as the figure gets its search from code, not from another planner call
(dev multi-hop 07 and 09: the 1.5B planner wrote the same plan three times when told in words)."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task

from agents.config import RuntimeConfig
from agents.llm import ModelProfile, ScriptedLLM, Strategy
from agents.tools import tool
from agents.tools.builtins import calculator

PASSAGES = {"capital of Italy": [{"title": "Italy", "text": "Italy: its capital is Rome."}],
            "Rome area": [{"title": "Rome", "text": "Rome: Area: the city covers about 1,285 km²."}]}
searched: list[str] = []

NUMERIC = RuntimeConfig(builtin_checks=("sound", "numeric"))  # code adds a search only with the numeric set
# A calculator handed passages (or a name) fails its arguments; reading the figures into it is the embedded model's
# Strategy.FIGURE_FIT, which these flows were measured with.
FIGURES = ModelProfile(strategies=frozenset({Strategy.FIGURE_FIT}))


@tool
def search(query: str) -> list:
    """Passages about the query -> passages."""
    searched.append(query)
    return PASSAGES.get(query, [])


HOP_INTO_CALCULATOR = wire.plan(
    wire.step(1, "search", {"query": "capital of Italy"}),
    wire.step(2, None, deps=[1], description="the name of the capital of Italy"),
    wire.step(3, "calculator", {"expression": "{$step_2_result} area"}, deps=[2]))


def test_code_adds_the_search_and_drops_the_call_that_did_no_arithmetic():
    searched.clear()
    llm = ScriptedLLM({"router": [wire.route()], "planner": [HOP_INTO_CALCULATOR],
                       "executor": ["Rome"],  # the name step, answered once: its output is kept on the replan
                       "reflector": [wire.reflection(answer="Rome, the capital of Italy, covers about 1,285 km².")]},
                      profile=FIGURES)
    result, sink = asyncio.run(run_task(llm, "What area does the capital of Italy cover?", tools=[search, calculator], config=NUMERIC))
    assert result.status == "accepted" and "1,285" in (result.answer or "")
    assert searched == ["capital of Italy", "Rome area"]
    replanned = [e.payload for e in sink.events if e.type == "replanned"]
    assert len(replanned) == 1 and replanned[0].feedback.startswith("Checked by code: step 3 needs a figure")
    assert replanned[0].kept_steps == [1, 2]
    plan_v2 = [e.payload.step for e in sink.events if e.type == "plan_step" and e.payload.plan_version == 2]
    assert [(s.step_id, s.tool_name) for s in plan_v2] == [(1, "search"), (2, None), (4, "search")]
    assert [c.role for c in llm.calls].count("planner") == 1 and llm.remaining() == {}


def test_a_call_that_does_arithmetic_reads_the_added_search_instead():
    searched.clear()
    plan = wire.plan(wire.step(1, "search", {"query": "capital of Italy"}),
                     wire.step(2, None, deps=[1], description="the name of the capital of Italy"),
                     wire.step(3, "calculator", {"expression": "{$step_2_result} / 2"}, deps=[2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "executor": ["Rome"],
                       "reflector": [wire.reflection(answer="Half of Rome's area is 642.5 km².")]}, profile=FIGURES)
    result, sink = asyncio.run(run_task(llm, "What is half the area of the capital of Italy?",
                                        tools=[search, calculator], config=NUMERIC))
    plan_v2 = [e.payload.step for e in sink.events if e.type == "plan_step" and e.payload.plan_version == 2]
    assert [(s.step_id, s.tool_input) for s in plan_v2][2:] == [
        (4, {"query": "{$step_2_result} area"}), (3, {"expression": "{$step_4_result} / 2"})]
    assert [s for s in result.steps if s.step_id == 3][0].output == 642.5
    assert result.status == "accepted"
