"""The plan's answer draft through a task, in-process with scripted roles (no Ray): the planner's ``answer:``
line is kept in the checkpoint, the reviewer confirms it with a bare verdict, the user's checks judge it
before the accept counts, and a replan or a second look does not carry it."""

from __future__ import annotations

import asyncio

from support.local import run_task

from agents.checks import AnswerReview, Reject
from agents.llm import ScriptedLLM
from agents.llm.base import LLMRequest
from agents.llm.function_llm import FunctionLLM

TASK = "How many more million people live in Rome than in Paris?"
PLAN = ('1. lookup(city="Paris")\n2. lookup(city="Rome")\n3. subtract(a=$2, b=$1)\n'
        "answer: Rome has $3 million more people than Paris.")
ROUTE = '{"route": "plan", "confidence": 0.95, "reason": "needs tools"}'


def run(llm, checks=()):
    return asyncio.run(run_task(llm, TASK, checks=checks))


def test_a_bare_accept_makes_the_filled_draft_the_answer_and_the_checkpoint_keeps_the_draft():
    llm = ScriptedLLM({"router": [ROUTE], "planner": [PLAN], "reflector": ["accept 5 5 5"]})
    result, sink = run(llm)
    assert result.status == "accepted" and result.answer == "Rome has 0.7 million more people than Paris."
    assert result.usage.total.llm_calls == 3
    assert "answer" not in result.plan.model_dump()  # the wire plan is unchanged
    draft = "Rome has {$step_3_result} million more people than Paris."
    assert sink.checkpoints[-1]["drafted_answer"] == draft
    llm.assert_complete()


def test_the_users_check_judges_the_confirmed_draft_and_the_second_look_writes_its_own_answer():
    prompts: list[str] = []

    def reviewer(request: LLMRequest) -> str:
        text = "\n".join(str(m["content"]) for m in request.messages)
        prompts.append(text)
        second = "accept 5 5 5\nanswer: Rome, by 0.7 million (2.8 vs 2.1)."
        return "accept 5 5 5" if len(prompts) == 1 else second

    def cites_both(review: AnswerReview) -> None:
        if "2.1" not in (review.answer or ""):
            raise Reject("state both populations")

    llm = FunctionLLM(lambda r: {"router": ROUTE, "planner": PLAN}.get(r.role) or reviewer(r))
    result, _ = run(llm, [cites_both])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million (2.8 vs 2.1)."
    assert "The plan's answer" in prompts[0] and "The plan's answer" not in prompts[1]
    assert "state both populations" in prompts[1]


def test_a_replan_drops_the_first_plans_draft():
    first = '1. lookup(city="Paris")\n2. lookup(city="Rome")\nanswer: Paris has $1 million people.'
    replanned = '3. subtract(a=$2, b=$1)'
    llm = ScriptedLLM({"router": [ROUTE], "planner": [first, replanned],
                       "reflector": ["replan 2 2 4: compute the difference",
                                     "accept 5 5 5",  # no draft to confirm now: the repair round
                                     "accept 5 5 5\nanswer: Rome, by 0.7 million."]})
    result, sink = run(llm)
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million."
    assert sink.checkpoints[-1]["drafted_answer"] is None
    assert any(c["drafted_answer"] == "Paris has {$step_1_result} million people." for c in sink.checkpoints)
    llm.assert_complete()
