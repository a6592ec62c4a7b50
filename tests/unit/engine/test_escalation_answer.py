"""An escalation proposes the latest answer code found consistent with the results, not whatever the last review
wrote: a probe task's first review answered "about 127.3%" (right, but scored completeness 1), its second look the
same, a replan followed, and the last review asked to replan again with no answer: the task escalated with none."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task, run_then_respond

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, ModelProfile, ScriptedLLM, Strategy
from agents.tools import tool
from agents.tools.builtins import calculator

# Which answer code found consistent with the results (it states the computed figure) is the numeric set's
# reading: asked for explicitly.
NUMERIC = ("sound", "numeric")
# The probe task's calculator step gets the searches' passages: code reads each passage's figure into it
# (``Strategy.FIGURE_FIT``, the embedded model's, where the probe ran) instead of an executor call, so the results
# the reviews are scripted against are the same whatever the executor would write.
FIGURES = ModelProfile(strategies=frozenset({Strategy.FIGURE_FIT}))
PASSAGES = {"height of Mont Blanc": [{"title": "Mont Blanc", "text": "Mont Blanc: Height: about 4,806 m."}],
            "height of Mount Fuji": [{"title": "Mount Fuji", "text": "Mount Fuji: Height: about 3,776 m."}]}


@tool
def search(query: str) -> list:
    """Passages about the query -> passages."""
    return PASSAGES.get(query, [])


TASK = "What percentage of the height of Mount Fuji is the height of Mont Blanc? Give one decimal."
PLAN = wire.plan(wire.step(1, "search", {"query": "height of Mont Blanc"}),
                 wire.step(2, "search", {"query": "height of Mount Fuji"}),
                 wire.step(3, "calculator", {"expression": "{$step_1_result} / {$step_2_result} * 100"}, deps=[1, 2]))
LOW_BUT_RIGHT = wire.reflection(scores=(1, 5, 5), answer="About 127.3% (4,806 m over 3,776 m).")
NO_ANSWER = wire.reflection("replan", (1, 3, 4), answer=None, feedback="The results do not give the percentage.")
WRONG = wire.reflection(answer="Mont Blanc is about 36.9% of Mount Fuji's height.")


def _run(reviews: list[str], plans: int = 2, max_replans: int = 1) -> TaskResult:
    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN] * plans, "reflector": reviews}, profile=FIGURES)
    result, _ = asyncio.run(run_task(llm, TASK, tools=[search, calculator],
                                     config=RuntimeConfig(builtin_checks=NUMERIC, max_replans=max_replans)))
    return result


def test_an_escalation_proposes_the_checked_answer_a_later_review_lost():
    # Review 1 is right but scored low (asked again), review 2 the same (replanned: the same plan, same results,
    # so the replan stops as a loop before a third review).
    result = _run([LOW_BUT_RIGHT, LOW_BUT_RIGHT])
    assert result.status == "escalated" and result.stopped_reason == "loop_detected"
    assert result.answer == "About 127.3% (4,806 m over 3,776 m)."
    assert "accept the last answer code found consistent with the results: About 127.3%" in result.question


def test_a_later_review_without_an_answer_does_not_erase_it():
    # A different second plan gets a third review, which asks to replan with no answer: past max_replans.
    other = wire.plan(wire.step(1, "search", {"query": "height of Mont Blanc"}),
                      wire.step(2, "search", {"query": "height of Mount Fuji"}),
                      wire.step(3, "calculator", {"expression": "{$step_1_result} * 100 / {$step_2_result}"},
                                deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN, other],
                       "reflector": [LOW_BUT_RIGHT, LOW_BUT_RIGHT, NO_ANSWER]}, profile=FIGURES)
    result, _ = asyncio.run(run_task(llm, TASK, tools=[search, calculator], config=RuntimeConfig(builtin_checks=NUMERIC, max_replans=1)))
    assert result.status == "escalated" and result.stopped_reason == "max_replans"
    assert result.answer == "About 127.3% (4,806 m over 3,776 m)."
    assert result.question.endswith("An earlier answer, which code found consistent with the results but the "
                                    "review did not accept: About 127.3% (4,806 m over 3,776 m).")


def test_an_answer_code_refuted_is_not_the_checked_one():
    # Review 2 writes a figure no result supports (36.9 is Fuji over Mont Blanc): refused, asked again once, then
    # replanned; the checked answer of review 1 is what the escalation proposes.
    result = _run([LOW_BUT_RIGHT, WRONG, WRONG], plans=2)
    assert result.status == "escalated"
    assert result.answer == "About 127.3% (4,806 m over 3,776 m)."


def test_without_a_checked_answer_the_last_review_is_proposed_as_before():
    plan = wire.plan(wire.step(1, "search", {"query": "height of Mont Blanc"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan, plan],
                       "reflector": [wire.reflection("replan", (2, 2, 2), answer="about 4,806 m")]})
    result, _ = asyncio.run(run_task(llm, "How high is Mont Blanc?", tools=[search], config=RuntimeConfig(builtin_checks=NUMERIC)))
    assert result.stopped_reason == "loop_detected" and result.answer == "about 4,806 m"
    assert "accept the last proposed answer: about 4,806 m" in result.question


def test_approving_the_escalation_accepts_the_answer_it_proposed(tmp_path):
    # Also the Supervisor's race: the approved run ends without awaiting anything, and a result waited for at once
    # was the store's, the escalation before it (``SupervisorCore.wait_result``).
    config = RuntimeConfig(builtin_checks=NUMERIC, store_path=tmp_path / "s.db", max_replans=1)
    reviews = iter([LOW_BUT_RIGHT, LOW_BUT_RIGHT])

    def model(request) -> str:
        return {"router": wire.route(), "planner": PLAN}.get(request.role) or next(reviews)

    first, result = run_then_respond(config, FunctionLLM(model, profile=FIGURES), TASK, tools=[search, calculator])
    assert first["status"] == "escalated", first
    assert result.status == "accepted" and result.answer == "About 127.3% (4,806 m over 3,776 m)."
