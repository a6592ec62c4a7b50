"""The user's answer checks on Ray: pickled with the Orchestrator to the Supervisor actor, their refusals and
faults reaching the driver intact in events and results."""

from __future__ import annotations

import pytest
from support import tools as T
from support import wire

from agents import Orchestrator, RuntimeConfig
from agents.checks import AnswerReview, Reject
from agents.errors import ConfigError
from agents.llm import HOSTED, ScriptedLLM, Strategy

pytestmark = pytest.mark.ray

TASK = "Which is bigger, Paris or Rome, and by how much?"
PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))


def names_rome(review: AnswerReview) -> None:
    if "Rome" not in (review.answer or ""):
        raise Reject("the answer must name Rome")


async def never_negative(review: AnswerReview) -> None:
    if any(isinstance(s.output, float) and s.output < 0 for s in review.steps):
        raise Reject("no figure may be negative")


def test_a_refusal_on_ray_reaches_the_events_and_the_result(ray_session, tmp_path):
    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN],
                       "reflector": [wire.reflection(answer="the second city, by 0.7 million"),
                                     wire.reflection(answer="Rome, by 0.7 million")]})
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        checks=[names_rome, never_negative])
    try:
        handle = orch.submit(TASK)
        reflected = [e for e in handle.events() if e.type == "reflected"]
        result = handle.result(timeout=60)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [(f.check, f.message) for f in result.reflections[0].checks if f.source == "user"] == [
        ("names_rome", "the answer must name Rome")]
    assert reflected[0].payload.decision == "review_again"
    assert reflected[0].payload.reflection.checks == result.reflections[0].checks


def test_a_second_look_written_as_the_answer_alone_crosses_ray(ray_session, tmp_path):
    # The embedded model's reviewer (reflector/v10 with final_figure_look and answer_again): the review looked at
    # again (a typed SecondLook) goes to the reviewer actor and back; the profile crosses Ray with the model.
    profile = HOSTED.model_copy(update={
        "prompts": {"reflector": "v10"}, "reply_forms": {**HOSTED.reply_forms, "reflector": "json"},
        "strategies": frozenset({Strategy.FINAL_FIGURE_LOOK, Strategy.ANSWER_AGAIN})})
    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN],
                       "reflector": [wire.reflection(answer="Rome has 2.8 million people, Paris 2.1 million.",
                                                     scores=(5, 4, 5)),
                                     '{"answer": "Rome, by 0.7 million."}']}, profile=profile)
    config = RuntimeConfig(store_path=tmp_path / "t.db")
    orch = Orchestrator(llm=llm, tools=T.ALL, config=config)
    try:
        result = orch.run(TASK, timeout=60)
    finally:
        orch.shutdown()
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million."
    first, second = result.reflections
    assert second.scores == first.scores and [f.kind for f in first.checks] == ["ask_again"]


def test_a_broken_check_on_ray_fails_the_task_with_its_name(ray_session, tmp_path):
    def reads_a_missing_field(review: AnswerReview) -> None:
        raise AttributeError("'AnswerReview' object has no attribute 'sources'")

    llm = ScriptedLLM({"router": [wire.route()], "planner": [PLAN],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    orch = Orchestrator(llm=llm, tools=T.ALL, config=RuntimeConfig(store_path=tmp_path / "t.db"),
                        checks=[reads_a_missing_field])
    try:
        result = orch.run(TASK, timeout=60)
    finally:
        orch.shutdown()
    assert result.status == "failed" and result.stopped_reason == "check_failed"
    assert "'reads_a_missing_field' raised AttributeError" in (result.error or "")
    assert "ray::" not in (result.error or "") and "pid=" not in (result.error or "")


def test_checks_that_are_not_functions_are_refused_before_anything_starts():
    with pytest.raises(ConfigError, match="list of functions"):
        Orchestrator(llm=ScriptedLLM({}), tools=T.ALL, checks=names_rome)  # type: ignore[arg-type]
