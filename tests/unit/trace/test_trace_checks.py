"""A check's refusal is in the stored record: the trace page, the checkpointed result and the event log."""

from __future__ import annotations

from support import wire
from support.traced import run_stored

from agents.checks import AnswerReview, Reject
from agents.llm import ModelProfile, ScriptedLLM, Strategy
from agents.store import Store
from agents.trace.cli import load_trace
from agents.trace.html import render_html

PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))


def names_rome(review: AnswerReview) -> None:
    if "Rome" not in (review.answer or ""):
        raise Reject("the answer must name Rome")


def test_a_refusal_is_shown_on_the_trace_page_and_kept_in_the_store(tmp_path):
    db = tmp_path / "tasks.db"
    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN],
                       "reflector": [wire.reflection(answer="the second one, by 0.7 million"),
                                     wire.reflection(answer="Rome, by 0.7 million")]})
    task_id, result, live = run_stored(db, llm, "Which is bigger, Paris or Rome, and by how much?",
                                       checks=[names_rome])
    assert result.status == "accepted"
    page = render_html(load_trace(task_id, db))
    assert "names_rome: the answer must name Rome" in page
    stored = Store(db).get_result(task_id)
    assert stored is not None and stored.reflections[0].checks == result.reflections[0].checks
    assert any(e["type"] == "reflected" and e["payload"]["reflection"]["checks"] for e in live)


def test_a_second_look_code_asked_for_is_shown_as_one_not_as_a_refusal(tmp_path):
    db = tmp_path / "tasks.db"
    # The look at an answer without the final figure is a model profile's (Strategy.FINAL_FIGURE_LOOK).
    look = ModelProfile(strategies=frozenset({Strategy.FINAL_FIGURE_LOOK}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN],
                       "reflector": [wire.reflection(answer="Rome has 2.8 million people, Paris 2.1 million."),
                                     wire.reflection(answer="Rome, by 0.7 million")]}, profile=look)
    task_id, result, _ = run_stored(db, llm, "Which is bigger, Paris or Rome, and by how much?")
    assert result.status == "accepted" and [f.kind for f in result.reflections[0].checks] == ["ask_again"]
    assert "builtin (asked again): it does not state 0.7" in render_html(
        load_trace(task_id, db))
    stored = Store(db).get_result(task_id)
    assert stored is not None and stored.reflections[0].checks == result.reflections[0].checks
