"""The user's answer checks inside the engine, in-process with scripted roles (no Ray)."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task

from agents.checks import AnswerReview, Reject
from agents.config import RuntimeConfig
from agents.llm import ScriptedLLM

TASK = "Which is bigger, Paris or Rome, and by how much?"
TWO_CITIES = wire.plan(
    wire.step(1, "lookup", {"city": "Paris"}),
    wire.step(2, "lookup", {"city": "Rome"}),
    wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
)


def run(llm, checks, **kw):
    return asyncio.run(run_task(llm, TASK, checks=checks, **kw))


def names_rome(review: AnswerReview) -> None:
    if "Rome" not in (review.answer or ""):
        raise Reject("the answer must name Rome")


def test_a_passing_check_costs_nothing_and_is_recorded_as_silent():
    seen: list[AnswerReview] = []
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    result, _ = run(llm, [names_rome, seen.append])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert result.usage.total.llm_calls == 3
    assert result.reflections[0].checks == ()
    (review,) = seen  # the check saw the task, the answer and every call with its resolved arguments
    assert review.task == TASK and review.answer == "Rome, by 0.7 million"
    assert [(s.step_id, s.tool_name, s.arguments, s.output) for s in review.steps] == [
        (1, "lookup", {"city": "Paris"}, 2.1), (2, "lookup", {"city": "Rome"}, 2.8),
        (3, "subtract", {"a": 2.8, "b": 2.1}, 0.7)]
    llm.assert_complete()


def test_a_refused_accept_is_reviewed_again_with_the_reason_and_the_refusal_is_recorded():
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer="the second city, by 0.7 million"),
                                     wire.reflection(answer="Rome, by 0.7 million")]})
    result, sink = run(llm, [names_rome])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    first, second = result.reflections
    assert [(f.check, f.source, f.message) for f in first.checks] == [("names_rome", "user", "the answer must name Rome")]
    assert second.checks == ()
    reflected = [e.payload for e in sink.events if e.type == "reflected"]
    assert reflected[0].decision == "review_again" and "the answer must name Rome" in reflected[0].reason
    assert reflected[0].reflection.checks[0].check == "names_rome"
    # the second review was told what the check refused
    second_prompt = " ".join(m["content"] for m in llm.calls[-1].messages)
    assert "the answer must name Rome" in second_prompt
    llm.assert_complete()


def test_a_check_that_always_refuses_ends_in_an_escalation_never_an_accept():
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES] * 3,
                       "reflector": [wire.reflection(answer="Paris")] * 6})
    result, _ = run(llm, [names_rome], config=RuntimeConfig(max_replans=1))
    assert result.status == "escalated"
    assert result.reflections and all(
        ("names_rome", "user") in {(f.check, f.source) for f in r.checks} for r in result.reflections)


def test_checks_do_not_run_when_the_reviewer_does_not_accept():
    calls: list[str] = []
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection("escalate", (2, 2, 2), answer=None, feedback="unsure")]})
    result, _ = run(llm, [lambda review: calls.append(review.answer or "")])
    assert result.status == "escalated" and calls == []


def test_a_broken_check_fails_the_task_naming_it():
    def needs_a_table(review: AnswerReview) -> None:
        raise KeyError("population")

    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    result, sink = run(llm, [needs_a_table])
    assert result.status == "failed" and result.stopped_reason == "check_failed"
    assert "'needs_a_table' raised KeyError" in (result.error or "") and "Reject" in (result.error or "")
    assert result.answer is None
    assert len(result.reflections) == 1  # the review it broke on is still recorded
    assert sink.events[-1].type == "task_finished" and sink.events[-1].payload.error == result.error


def test_an_async_check_refuses_like_a_sync_one():
    async def states_the_unit(review: AnswerReview) -> None:
        await asyncio.sleep(0)
        if review.step(3).output is not None and "million" not in (review.answer or ""):
            raise Reject("the lookups are in millions: say so")

    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer="Rome, by 0.7"),
                                     wire.reflection(answer="Rome, by 0.7 million")]})
    result, _ = run(llm, [states_the_unit])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert result.reflections[0].checks[-1].message == "the lookups are in millions: say so"
    llm.assert_complete()
