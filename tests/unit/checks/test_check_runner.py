"""The user's checks run alone (no engine): how a pass, a refusal, a broken check and a slow one come out."""

from __future__ import annotations

import asyncio
import functools
import pickle
import time

import pytest

from agents.checks import AnswerReview, CheckedReflection, CheckFinding, Reject, ReviewedStep
from agents.checks.runner import check_name, run_checks, validate_checks, with_findings
from planning.models import Reflection
from planning.policy import Accept, ReflectionContext, ReviewAgain, decide

REVIEW = AnswerReview(task="Which is bigger, Paris or Rome?", answer="Rome, by 0.7 million",
                      steps=(ReviewedStep(step_id=1, tool_name="lookup", arguments={"city": "Paris"}, output=2.1),
                             ReviewedStep(step_id=2, tool_name="lookup", arguments={"city": "Rome"}, output=2.8)))


def run(checks, review=REVIEW, timeout_s=5.0):
    return asyncio.run(run_checks(checks, review, timeout_s=timeout_s))


def names_rome(review: AnswerReview) -> None:
    if "Rome" not in (review.answer or ""):
        raise Reject("the answer must name Rome")


def names_berlin(review: AnswerReview) -> None:
    if "Berlin" not in (review.answer or ""):
        raise Reject("the answer must name Berlin")


async def async_positive(review: AnswerReview) -> None:
    await asyncio.sleep(0)
    if any(isinstance(s.output, float) and s.output < 0 for s in review.steps):
        raise Reject("a population cannot be negative")


def broken(review: AnswerReview) -> None:
    raise ValueError("no such column")


def test_a_passing_check_finds_nothing():
    assert run([names_rome]).findings == () and run([names_rome]).fault is None


def test_every_refusal_is_reported_in_the_order_the_checks_were_given():
    out = run([names_berlin, names_rome, lambda r: (_ for _ in ()).throw(Reject("second"))])
    assert out.fault is None
    assert [(f.check, f.source, f.message) for f in out.findings] == [
        ("names_berlin", "user", "the answer must name Berlin"), ("<lambda>", "user", "second")]


def test_async_checks_see_the_steps():
    negative = REVIEW.model_copy(update={"steps": (ReviewedStep(step_id=1, tool_name="lookup", output=-1.0),)})
    assert run([async_positive], negative).findings[0].message == "a population cannot be negative"
    assert run([async_positive]).findings == ()


def test_a_check_that_raises_anything_else_is_a_fault_naming_it():
    out = run([names_rome, broken])
    assert out.findings == ()
    assert out.fault is not None and "'broken'" in out.fault and "ValueError: no such column" in out.fault
    assert "Reject" in out.fault  # it says how a check is meant to refuse


def test_a_check_past_its_time_limit_is_a_fault_naming_the_limit():
    async def hangs(review: AnswerReview) -> None:
        await asyncio.sleep(30)

    started = time.monotonic()
    out = run([hangs], timeout_s=0.2)
    assert time.monotonic() - started < 5
    assert out.fault is not None and "hangs" in out.fault and "check_timeout_s" in out.fault


def test_a_timeout_the_check_raises_itself_is_its_own_fault_not_the_limit():
    def calls_a_server(review: AnswerReview) -> None:
        raise TimeoutError("the inventory service did not answer")

    out = run([calls_a_server])
    assert out.fault is not None and "TimeoutError: the inventory service" in out.fault
    assert "check_timeout_s" not in out.fault


def test_a_slow_sync_check_does_not_block_the_event_loop():
    def slow(review: AnswerReview) -> None:
        time.sleep(0.3)

    async def main() -> float:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        t = asyncio.ensure_future(ticker())
        await run_checks([slow], REVIEW, timeout_s=5)
        t.cancel()
        return ticks

    assert asyncio.run(main()) > 5


def test_names_of_partials_and_callable_objects():
    class Checker:
        def __call__(self, review: AnswerReview) -> None:
            raise Reject("always")

    assert check_name(functools.partial(names_rome)) == "names_rome"
    assert run([Checker()]).findings[0].check == "Checker"


@pytest.mark.parametrize("bad", [names_rome, "names_rome", [1], [names_rome, None]])
def test_checks_must_be_a_list_of_functions(bad):
    with pytest.raises(TypeError, match="check"):
        validate_checks(bad)


def test_no_checks_is_allowed():
    assert validate_checks(None) == () and validate_checks([]) == ()
    assert validate_checks((names_rome,)) == (names_rome,)


def test_reject_and_findings_survive_pickling():
    e = pickle.loads(pickle.dumps(Reject("the answer must name Rome")))
    assert type(e) is Reject and e.reason == "the answer must name Rome" and str(e) == e.reason
    f = CheckFinding(check="names_rome", source="user", message="m")
    assert pickle.loads(pickle.dumps(f)) == f


def _accept(answer: str = "Rome") -> Reflection:
    return Reflection.model_validate({"scores": {"completeness": 5, "correctness": 5, "format": 5},
                                      "overall_pass": True, "action": "accept", "answer": answer})


def test_a_refusal_turns_an_accept_into_a_second_review_then_a_replan():
    ctx = ReflectionContext(reflection=_accept(), step_retries={}, replans=0, answer_only=True, states_computed=True)
    assert isinstance(decide(ctx), Accept)
    refused = with_findings(ctx, [CheckFinding(check="names_rome", source="user", message="must name Rome.")])
    assert refused.contradictions == ("Check names_rome: must name Rome.",)
    assert not refused.checked  # code no longer vouches for a refused answer
    assert isinstance(decide(refused), ReviewAgain)
    again = with_findings(ReflectionContext(reflection=_accept(), step_retries={}, replans=0, answer_only=True,
                                            reviewed_again=True),
                          [CheckFinding(check="names_rome", source="user", message="must name Rome")])
    assert type(decide(again)).__name__ == "Replan"
    assert with_findings(ctx, []) is ctx


def test_a_plain_reflection_is_a_checked_one_with_no_findings():
    checked = CheckedReflection.model_validate(_accept())
    assert checked.checks == () and checked.answer == "Rome"
    # the reviewer's schema is unchanged: a reply can never claim a check's finding
    assert "checks" not in Reflection.model_json_schema()["properties"]


def _returns_false(review: AnswerReview) -> bool:
    return "Berlin" in (review.answer or "")


async def _returns_message(review: AnswerReview) -> str:
    return "the answer should name Berlin"


@pytest.mark.parametrize(("check", "shown"), [(_returns_false, "returned False (bool)"),
                                              (_returns_message, "returned 'the answer should name Berlin' (str)"),
                                              (lambda review: True, "returned True (bool)")])
def test_a_check_returning_a_verdict_is_a_fault_naming_it_not_a_silent_pass(check, shown):
    """Issue 60: a check returning False or a string passed silently. Only None passes."""
    outcome = run([names_rome, check])
    assert outcome.findings == () and outcome.fault is not None
    assert f"the answer check {check_name(check)!r} {shown}" in outcome.fault
    assert "returns None to pass and raises agents.checks.Reject('why') to refuse" in outcome.fault
