"""The planner-only probe scores a plan against the task's right plan, and runs the real planner role."""

from __future__ import annotations

import asyncio
import json

from agents.llm import FunctionLLM, LLMRequest
from benchmarks.generality.plan_probe import probe, score_plan, summary
from benchmarks.generality.suite import select


def computing_task():
    return next(t for t in select("dev") if sum(s["tool_name"] != "calculator" for s in t.plan["steps"]) == 2
                and any(s["tool_name"] == "calculator" for s in t.plan["steps"]))


def test_the_right_plan_scores_right_and_figures_from_memory_do_not() -> None:
    task = computing_task()
    steps = task.plan["steps"]
    assert score_plan(task, steps) == (True, True, 0)
    assert score_plan(task, [{"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "3 - 2"}}]) \
        == (False, False, 0)
    one_lookup = [s for s in steps if s["tool_name"] != "calculator"][:1]
    assert score_plan(task, one_lookup)[0] is False  # a subject left out
    no_compute = [s for s in steps if s["tool_name"] != "calculator"] + [{"step_id": 9, "tool_name": None}]
    assert score_plan(task, no_compute) == (True, False, 1)


def test_the_probe_asks_the_real_planner_and_sums_per_version() -> None:
    tasks = [computing_task()]

    def reply(request: LLMRequest) -> str:
        assert request.role == "planner"
        return json.dumps({"needs": ["a fact: a tool"], "steps": tasks[0].plan["steps"]})

    rows = asyncio.run(probe(tasks, FunctionLLM(reply), "v11"))
    assert [(r.lookups, r.computes, r.reasoning) for r in rows] == [(True, True, 0)]
    totals = summary(rows)["v11"]
    assert (totals["tasks"], totals["plans"], totals["lookups"], totals["computes"]) == (1, 1, 1, 1)
