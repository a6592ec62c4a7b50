"""A model whose profile uses ``Strategy.ANSWER_AGAIN`` (the small-local one, reflector/v10) writes only the answer
again after an accept that left out the plan's final figure: one narrow call (prompts/answer) whose answer the server
holds to writing that figure, the first verdict and scores standing, the new answer checked like any other. Other
second looks, a final figure of zero, or an answer the model cannot write are whole reviews, as with a profile that
takes the final figure's look (``Strategy.FINAL_FIGURE_LOOK``) without ``ANSWER_AGAIN``. The hosted profile takes
neither: the accept stands."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from support import wire
from support.local import run_task

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, ModelProfile, ScriptedLLM
from agents.llm.profile import HOSTED, SMALL_LOCAL, Strategy
from agents.roles.messages import SecondLook, StepView
from agents.roles.reflector import Reflector
from planning.models import Plan, PlanStep, Reflection, Scores

TASK = "Which is bigger, Paris or Rome, and by how much?"
TWO_CITIES = wire.plan(
    wire.step(1, "lookup", {"city": "Paris"}),
    wire.step(2, "lookup", {"city": "Rome"}),
    wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
)
RESTATED = "Rome has 2.8 million people, Paris 2.1 million."


WHOLE_LOOK = SMALL_LOCAL.model_copy(update={"strategies": SMALL_LOCAL.strategies - {Strategy.ANSWER_AGAIN}})
"""The small-local profile looking again at an unstated final figure with the whole review, not the answer alone."""


def _run(reviews: list[str], profile: ModelProfile = SMALL_LOCAL):
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES], "reflector": reviews}, profile=profile)
    result, sink = asyncio.run(run_task(llm, TASK))
    return result, [e.payload for e in sink.events if e.type == "reflected"], llm


def _answer(text: str) -> str:
    return json.dumps({"answer": text})


def test_the_second_look_asks_only_for_the_answer_and_keeps_the_verdict():
    first = wire.reflection(answer=RESTATED, scores=(5, 4, 5))
    result, reflected, llm = _run([first, _answer("Rome, by 0.7 million people.")])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million people."
    assert [r.decision for r in reflected] == ["review_again", "accept"] and len(llm.calls) == 4
    asked = [c for c in llm.calls if c.role == "reflector"][1]
    prompt = "\n".join(m["content"] for m in asked.messages)
    assert "WRITE THE ANSWER" in prompt and "REVIEWER" not in prompt
    assert "Step 3 (subtract) computed 0.7 from steps 1 and 2" in prompt and TASK in prompt
    assert asked.json_schema is not None and set(asked.json_schema["properties"]) == {"answer"}
    assert "(0[.,]7" in asked.json_schema["properties"]["answer"]["pattern"]
    assert asked.metadata.get("purpose") == "answer"
    first_review, second_review = result.reflections
    assert second_review.scores == first_review.scores and second_review.action == "accept"
    assert second_review.answer == "Rome, by 0.7 million people."


def test_the_written_answer_is_checked_like_any_other():
    # Code refuses a false equation in the new answer: it is not accepted, and the plan is not asked about twice.
    result, reflected, _ = _run([wire.reflection(answer=RESTATED),
                                 _answer("Rome: 2.8 - 2.1 = 0.9."),
                                 wire.reflection(action="escalate", answer=None, feedback="which figure?")])
    assert [r.decision for r in reflected][:2] == ["review_again", "replan"]
    assert result.status != "accepted" or result.answer != "Rome: 2.8 - 2.1 = 0.9."


def test_an_unusable_written_answer_is_repaired_once_then_the_whole_review_is_asked():
    result, _, llm = _run([wire.reflection(answer=RESTATED), "not json", _answer("Rome, by 0.7 million.")])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million." and len(llm.calls) == 5
    empty = json.dumps({"answer": "  "})
    result, reflected, llm = _run([wire.reflection(answer=RESTATED), empty, empty,
                                   wire.reflection(answer="Rome, by 0.7 million people")])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million people"
    assert [r.decision for r in reflected] == ["review_again", "accept"]
    whole = [c for c in llm.calls if c.role == "reflector"][3]
    assert "REVIEWER" in "\n".join(m["content"] for m in whole.messages)
    assert result.usage.total.llm_calls == 6, "the failed answer calls are paid for"


def _orders_look(difference: int, reply: str) -> tuple[Reflection, list]:
    views = [StepView(1, "open orders of A", "orders", "completed", 5),
             StepView(2, "open orders of B", "orders", "completed", 5 + difference),
             StepView(3, "difference", "calculator", "completed", difference)]
    plan = Plan(steps=[PlanStep(step_id=1, description="", tool_name="orders", tool_input={"customer": "A"}),
                       PlanStep(step_id=2, description="", tool_name="orders", tool_input={"customer": "B"}),
                       PlanStep(step_id=3, description="", tool_name="calculator", depends_on=[1, 2],
                                tool_input={"expression": "max($1, $2) - min($1, $2)"})])
    seen = []

    def model(request):
        seen.append(request)
        return reply

    before = Reflection(scores=Scores(completeness=5, correctness=5, format=5), overall_pass=True, action="accept",
                        answer=f"B has {5 + difference}, A has 5.")
    reflector = Reflector(FunctionLLM(model, profile=SMALL_LOCAL), RuntimeConfig().prompt_options(),
                          "orders: open orders")
    again = SecondLook(f"it does not state {difference}", "unstated_figure", before)
    result = asyncio.run(reflector.reflect("t", "Who has more open orders, A or B, and by how many?", plan, views,
                                           again))
    return result.value, seen


def test_a_one_digit_final_figure_is_held_to_as_a_number_of_its_own():
    answer, seen = _orders_look(3, _answer("B, by 3 orders."))
    assert answer.answer == "B, by 3 orders." and len(seen) == 1
    pattern = seen[0].json_schema["properties"]["answer"]["pattern"]
    assert re.fullmatch(pattern, "B, by 3.") and not re.fullmatch(pattern, "B has 13, A has 5.")


def test_a_zero_final_figure_is_asked_about_with_the_whole_review():
    # "0" would be any zero in the answer and says nothing of which is larger: the whole review decides.
    answer, seen = _orders_look(0, wire.reflection(answer="Both have 5."))
    assert answer.answer == "Both have 5." and len(seen) == 1
    assert "REVIEWER" in "\n".join(m["content"] for m in seen[0].messages)


@pytest.mark.parametrize("profile", [WHOLE_LOOK, SMALL_LOCAL], ids=["whole-look", "answer-again"])
def test_an_answer_code_found_wrong_gets_the_whole_review_again(profile):
    wrong = "Rome is bigger: 2.8 + 2.1 = 9."  # a false equation: the answer's fault, not an omission
    result, reflected, llm = _run([wire.reflection(answer=wrong), wire.reflection(answer="Rome, by 0.7 million.")],
                                  profile)
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million."
    assert [r.decision for r in reflected] == ["review_again", "accept"]
    asked = [c for c in llm.calls if c.role == "reflector"][1]
    assert "REVIEWER" in "\n".join(m["content"] for m in asked.messages)


def test_without_answer_again_the_look_is_the_whole_review():
    result, reflected, llm = _run([wire.reflection(answer=RESTATED), wire.reflection(answer="Rome, by 0.7 million")],
                                  WHOLE_LOOK)
    assert result.answer == "Rome, by 0.7 million" and [r.decision for r in reflected] == ["review_again", "accept"]
    asked = [c for c in llm.calls if c.role == "reflector"][1]
    assert "REVIEWER" in "\n".join(m["content"] for m in asked.messages)


def test_the_hosted_profile_takes_no_second_look_at_an_unstated_figure():
    result, reflected, llm = _run([wire.reflection(answer=RESTATED)], HOSTED)
    assert result.status == "accepted" and result.answer == RESTATED
    assert [r.decision for r in reflected] == ["accept"]
    assert [c.role for c in llm.calls] == ["router", "planner", "reflector"]
