"""A ratio computed the wrong way round is rewritten by code before any review: no planner call, one review."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task

from agents.llm import ScriptedLLM
from agents.tools import tool
from agents.tools.builtins import calculator

PASSAGES = {"area of Rome": [{"title": "Rome", "text": "Rome: Area: the city covers about 1,285 km²."}],
            "area of the United Kingdom": [{"title": "United Kingdom",
                                            "text": "United Kingdom: Area: the country covers about 243,610 km²."}]}
searched: list[str] = []


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
                                                            "(1,285 / 243,610 = 0.0053).")]})
    result, sink = asyncio.run(run_task(llm, TASK, tools=[search, calculator]))
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
                       "reflector": [wire.reflection(answer="About 0.01 times (1,285 / 243,610 km²).")]})
    result, sink = asyncio.run(run_task(llm, TASK, tools=[search, calculator]))
    assert result.status == "accepted"
    assert not [e for e in sink.events if e.type == "replanned"]
