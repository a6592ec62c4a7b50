"""With the opt-in numeric check set, a ratio computed the wrong way round, or a total computed short, is rewritten
by code before any review: no planner call, one review. By default code never rewrites the plan."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task

from agents.config import RuntimeConfig
from agents.llm import ModelProfile, ScriptedLLM, Strategy
from agents.tools import tool
from agents.tools.builtins import calculator

PASSAGES = {"area of Rome": [{"title": "Rome", "text": "Rome: Area: the city covers about 1,285 km²."}],
            "length of the Rhine": [{"title": "Rhine", "text": "Rhine: Length: about 1,230 km."}],
            "length of the Thames": [{"title": "Thames", "text": "Thames: Length: about 346 km."}],
            "area of the United Kingdom": [{"title": "United Kingdom",
                                            "text": "United Kingdom: Area: the country covers about 243,610 km²."}]}
searched: list[str] = []
NUMERIC = RuntimeConfig(builtin_checks=("sound", "numeric"))
# A calculator handed passages (or a name) fails its arguments; reading the figures into it is the embedded model's
# Strategy.FIGURE_FIT, which these flows were measured with.
FIGURES = ModelProfile(strategies=frozenset({Strategy.FIGURE_FIT}))


@tool
def search(query: str) -> list:
    """Passages about the query -> passages."""
    searched.append(query)
    return PASSAGES.get(query, [])


TASK = "How many times larger is the area of Rome than that of the United Kingdom? Give two decimals."
LARGER_OVER_SMALLER = wire.plan(
    wire.step(1, "search", {"query": "area of Rome"}),
    wire.step(2, "search", {"query": "area of the United Kingdom"}),
    wire.step(3, "calculator", {"expression": "max({$step_1_result}, {$step_2_result}) / "
                                              "min({$step_1_result}, {$step_2_result})"}, deps=[1, 2]))


def test_code_divides_the_asked_way_and_the_reviewer_reads_only_the_fixed_results():
    searched.clear()
    llm = ScriptedLLM({"router": [wire.route()], "planner": [LARGER_OVER_SMALLER],
                       "reflector": [wire.reflection(answer="Rome's area is about 0.01 times the United Kingdom's "
                                                            "(1,285 / 243,610 = 0.0053).")]}, profile=FIGURES)
    result, sink = asyncio.run(run_task(llm, TASK, tools=[search, calculator], config=NUMERIC))
    assert result.status == "accepted"
    replanned = [e.payload for e in sink.events if e.type == "replanned"]
    assert len(replanned) == 1 and "wrong way round" in replanned[0].feedback
    assert searched == ["area of Rome", "area of the United Kingdom"]  # the searches are not run again
    step3 = [s for s in result.steps if s.step_id == 3][0]
    assert abs(step3.output - 1_285 / 243_610) < 1e-9
    roles = [c.role for c in llm.calls]
    assert roles.count("planner") == 1 and roles.count("reflector") == 1 and llm.remaining() == {}


def test_a_ratio_the_asked_way_is_reviewed_as_it_is():
    plan = wire.plan(wire.step(1, "search", {"query": "area of Rome"}),
                     wire.step(2, "search", {"query": "area of the United Kingdom"}),
                     wire.step(3, "calculator", {"expression": "{$step_1_result} / {$step_2_result}"}, deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan],
                       "reflector": [wire.reflection(answer="About 0.01 times (1,285 / 243,610 km²).")]},
                      profile=FIGURES)
    result, sink = asyncio.run(run_task(llm, TASK, tools=[search, calculator], config=NUMERIC))
    assert result.status == "accepted"
    assert not [e for e in sink.events if e.type == "replanned"]


def test_a_total_computed_short_is_rewritten_to_add_its_inputs():
    # Dev arithmetic-03: "combined length" computed as max − min (884), then a replan to add them (166 s).
    searched.clear()
    plan = wire.plan(wire.step(1, "search", {"query": "length of the Rhine"}),
                     wire.step(2, "search", {"query": "length of the Thames"}),
                     wire.step(3, "calculator", {"expression": "max({$step_1_result}, {$step_2_result}) - "
                                                               "min({$step_1_result}, {$step_2_result})"}, deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan],
                       "reflector": [wire.reflection(answer="About 1,576 km (1,230 + 346).")]}, profile=FIGURES)
    result, sink = asyncio.run(run_task(llm, "What is the combined length of the Rhine and the Thames, in km?",
                                        tools=[search, calculator], config=NUMERIC))
    assert result.status == "accepted" and [s.output for s in result.steps if s.step_id == 3] == [1576]
    replanned = [e.payload.feedback for e in sink.events if e.type == "replanned"]
    assert len(replanned) == 1 and "less than the sum of the figures it used" in replanned[0]
    assert searched == ["length of the Rhine", "length of the Thames"]
    assert [c.role for c in llm.calls].count("planner") == 1 and llm.remaining() == {}


def test_by_default_code_rewrites_nothing_and_the_reviewer_reads_the_plan_as_written():
    searched.clear()
    llm = ScriptedLLM({"router": [wire.route()], "planner": [LARGER_OVER_SMALLER],
                       "executor": ['{"1": 1285, "2": 243610}'],  # the model reads each passage's figure
                       "reflector": [wire.reflection(answer="The United Kingdom's area is about 189.58 times Rome's.")]},
                      profile=FIGURES)
    result, sink = asyncio.run(run_task(llm, TASK, tools=[search, calculator]))
    assert result.status == "accepted" and result.answer == "The United Kingdom's area is about 189.58 times Rome's."
    assert not [e for e in sink.events if e.type == "replanned"]
    [step3] = [s.output for s in result.steps if s.step_id == 3]
    assert abs(step3 - 243_610 / 1_285) < 1e-9
    assert [c.role for c in llm.calls] == ["router", "planner", "executor", "reflector"] and llm.remaining() == {}
