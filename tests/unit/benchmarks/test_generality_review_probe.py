"""The reviewer-only probe runs the task's right plan through the real engine and asks the model only to review."""

from __future__ import annotations

import asyncio
import json

from agents.llm import FunctionLLM, LLMRequest
from benchmarks.generality.review_probe import review, summary
from benchmarks.generality.suite import select


def test_the_right_plan_is_executed_and_only_the_review_goes_to_the_model(tmp_path) -> None:
    task = next(t for t in select("dev") if any(s["tool_name"] == "calculator" for s in t.plan["steps"]))
    asked: list[str] = []

    def reviewer(answer: str):
        def reply(request: LLMRequest) -> str:
            asked.append(request.role)
            return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                               "action": "accept", "retry_details": None, "feedback": "", "answer": answer})
        return FunctionLLM(reply)

    right = asyncio.run(review([task], reviewer(task.answer), "v8", tmp_path / "a.db"))
    wrong_answer = next(iter(task.wrong_answers().values()))
    wrong = asyncio.run(review([task], reviewer(wrong_answer), "v8:sound", tmp_path / "b.db"))
    assert asked == ["reflector"] * 2  # router and planner were scripted, the plan's tools ran for real
    assert [(r.verdict, r.llm_calls) for r in (*right, *wrong)] == [("right", 3), ("accepted_wrong", 3)]
    totals = summary([*right, *wrong])
    assert (totals["v8"]["right"], totals["v8:sound"]["accepted_wrong"]) == (1, 1)


def test_computed_tasks_are_those_whose_right_plan_combines_results_with_a_tool():
    from benchmarks.generality.review_probe import computes
    from benchmarks.generality.suite import select

    tasks = select("dev")
    chosen = [t for t in tasks if computes(t)]
    assert 0 < len(chosen) < len(tasks)
    for t in tasks:
        combining = [s for s in t.plan["steps"] if s["tool_name"] and len(s["depends_on"]) >= 2]
        assert computes(t) == bool(combining), t.id
