"""With ``Strategy.FINAL_FIGURE_LOOK`` (a model profile's), an accept whose answer leaves out the plan's final result
is asked about once more, told so as a note; the second verdict counts (agents.checks.sound.omitted_final). The
hosted profile takes no such look: the accept stands."""

from __future__ import annotations

import asyncio

from support import wire
from support.local import run_task

from agents.llm import HOSTED, ModelProfile, ScriptedLLM, Strategy

TASK = "Which is bigger, Paris or Rome, and by how much?"
TWO_CITIES = wire.plan(
    wire.step(1, "lookup", {"city": "Paris"}),
    wire.step(2, "lookup", {"city": "Rome"}),
    wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
)


LOOK = ModelProfile(strategies=frozenset({Strategy.FINAL_FIGURE_LOOK}))
RESTATED = "Rome has 2.8 million people, Paris 2.1 million."


def _run(*answers: str, profile: ModelProfile = LOOK):
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer=a) for a in answers]}, profile=profile)
    result, sink = asyncio.run(run_task(llm, TASK))
    return result, [e.payload for e in sink.events if e.type == "reflected"], sink, llm


def test_the_reviewer_is_told_the_final_figure_and_may_put_it_in():
    result, reflected, sink, llm = _run("Rome has 2.8 million people, Paris 2.1 million.", "Rome, by 0.7 million")
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [r.decision for r in reflected] == ["review_again", "accept"]
    assert not [e for e in sink.events if e.type == "replanned"]
    told = " ".join(m["content"] for m in [c for c in llm.calls if c.role == "reflector"][1].messages)
    assert "was not accepted: it does not state 0.7, the figure step 3 (subtract) computed" in told
    assert "keep what it says and add 0.7" in told and "CONTRADICTION: Your previous" not in told


def test_the_record_says_why_the_first_accept_did_not_count():
    result, reflected, _, _ = _run("Rome has 2.8 million people, Paris 2.1 million.", "Rome, by 0.7 million")
    first, second = result.reflections
    [asked] = first.checks
    assert (asked.kind, asked.source, asked.check) == ("ask_again", "builtin", "builtin")
    assert "it does not state 0.7" in asked.message and second.checks == ()
    assert reflected[0].reflection == first  # the event and the result keep the same record


def test_the_second_verdict_counts_even_if_it_keeps_the_answer():
    answer = "Rome has 2.8 million people, Paris 2.1 million."
    result, reflected, _, llm = _run(answer, answer)
    assert result.status == "accepted" and result.answer == answer
    assert [r.decision for r in reflected] == ["review_again", "accept"] and len(llm.calls) == 4


def test_an_answer_stating_the_final_figure_costs_no_second_review():
    result, reflected, _, llm = _run("Rome, by 0.7 million people")
    assert result.status == "accepted" and [r.decision for r in reflected] == ["accept"] and len(llm.calls) == 3
    assert result.reflections[0].checks == ()


def test_the_hosted_profile_accepts_the_answer_without_a_second_review():
    result, reflected, _, llm = _run(RESTATED, profile=HOSTED)
    assert result.status == "accepted" and result.answer == RESTATED
    assert [r.decision for r in reflected] == ["accept"] and len(llm.calls) == 3
    assert result.reflections[0].checks == ()
