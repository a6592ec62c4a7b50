from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning import Accept, Escalate, PolicyLimits, Reflection, ReflectionContext, Replan, RetryStep, decide
from planning.models import RetryDetails, RouterDecision, Scores
from planning.policy import effective_route


def reflection(action, scores=(5, 5, 5), ok=True, retry=None, feedback="", answer="42"):
    return Reflection(scores=Scores(completeness=scores[0], correctness=scores[1], format=scores[2]),
                      overall_pass=ok, action=action, retry_details=RetryDetails(step_id=retry, modification="m")
                      if retry else None, feedback=feedback, answer=answer)


def ctx(r, retries=None, replans=0, limits=PolicyLimits(), steps=(1, 2, 3)):
    return ReflectionContext(reflection=r, step_retries=retries or {}, replans=replans, limits=limits,
                             step_ids=frozenset(steps))


@pytest.mark.parametrize("r, kwargs, expected", [
    (reflection("accept"), {}, Accept("42")),
    (reflection("accept", (4, 4, 4)), {}, Accept("42")),
    (reflection("accept", (5, 3, 5), feedback="wrong total"), {},
     Replan("The answer did not pass review (correctness 3/5, needs ≥ 4). wrong total")),
    (reflection("accept", ok=False), {}, Replan("The answer did not pass review (overall_pass was false). "
                                                "Fix what is wrong.")),
    (reflection("retry_step", retry=2), {}, RetryStep(2, "m")),
    (reflection("retry_step", retry=9, feedback="f"), {},
     Replan("The reviewer asked to retry a step but named step 9, which the plan does not have (its steps: 1, 2, "
            "3); replanning instead. The reviewer's feedback: f")),
    (reflection("retry_step", feedback="f"), {},
     Replan("The reviewer asked to retry a step but did not say which step (its steps: 1, 2, 3); replanning "
            "instead. The reviewer's feedback: f")),
    (reflection("replan", feedback="use metric"), {}, Replan("use metric")),
    (reflection("escalate", feedback="Which year do you mean?"), {},
     Escalate("the reflector escalated: Which year do you mean?", "Which year do you mean?", "reflector")),
])
def test_rules(r, kwargs, expected):
    assert decide(ctx(r, **kwargs)) == expected


def test_retry_of_an_unknown_step_at_the_replan_cap_asks_a_question_that_says_so():
    # Issue 19: the escalation read "retry How should I proceed?" (the reviewer's bare feedback).
    capped = decide(ctx(reflection("retry_step", retry=9, feedback="retry"), replans=2))
    assert isinstance(capped, Escalate) and capped.cause == "max_replans"
    assert "named step 9, which the plan does not have" in capped.question
    assert capped.question.endswith("How should I proceed?") and not capped.question.startswith("retry")


def test_caps_escalate_and_name_the_cap():
    retry_capped = decide(ctx(reflection("retry_step", retry=2), retries={2: 3}))
    assert isinstance(retry_capped, Escalate) and retry_capped.cause == "max_step_retries"
    assert "step 2 was already retried 3 times (max_step_retries=3)" in retry_capped.reason
    replan_capped = decide(ctx(reflection("replan", feedback="still wrong"), replans=2))
    assert isinstance(replan_capped, Escalate) and replan_capped.cause == "max_replans"
    assert replan_capped.reason.startswith("the plan was already replanned 2 times (max_replans=2)")
    # a failed accept also counts against the replan cap
    assert decide(ctx(reflection("accept", (2, 2, 2)), replans=2)).cause == "max_replans"


def test_custom_bar():
    lenient = PolicyLimits(accept_min_score=3, accept_min_correctness=3)
    assert decide(ctx(reflection("accept", (3, 3, 3)), limits=lenient)) == Accept("42")
    assert isinstance(decide(ctx(reflection("accept", (3, 2, 3)), limits=lenient)), Replan)


scores = st.tuples(*[st.integers(1, 5)] * 3)


@given(scores, st.booleans(), st.sampled_from(["accept", "retry_step", "replan", "escalate"]),
       st.integers(0, 5), st.integers(0, 5), st.integers(1, 4))
def test_never_accepts_below_the_bar_and_never_exceeds_caps(sc, ok, action, retries, replans, retry_step):
    limits = PolicyLimits()
    d = decide(ctx(reflection(action, sc, ok, retry=retry_step), retries={retry_step: retries}, replans=replans,
                   limits=limits))
    if isinstance(d, Accept):
        assert action == "accept" and ok and min(sc) >= limits.accept_min_score
    if isinstance(d, Replan):
        assert replans < limits.max_replans
    if isinstance(d, RetryStep):
        assert retries < limits.max_step_retries and d.step_id in (1, 2, 3)


@pytest.mark.parametrize("route, confidence, expected", [
    ("plan", 0.9, "plan"), ("direct", 0.59, "clarify"), ("refuse", 0.3, "clarify"), ("clarify", 0.1, "clarify"),
])
def test_effective_route(route, confidence, expected):
    assert effective_route(RouterDecision(route=route, confidence=confidence), 0.6) == expected


def _refused(r, *, answer_only, reviewed_again=False, replans=0):
    return decide(ReflectionContext(reflection=r, step_retries={}, replans=replans, step_ids=frozenset({1, 2}),
                                    contradictions=("The answer states 744,000, which no step result supports.",),
                                    answer_only=answer_only, reviewed_again=reviewed_again))


def test_an_answer_code_refuses_over_sound_results_is_reviewed_again_once():
    from planning.policy import ReviewAgain, decision_kind, decision_reason

    again = _refused(reflection("accept"), answer_only=True)
    assert again == ReviewAgain("The answer states 744,000, which no step result supports.")
    assert decision_kind(again) == "review_again" and "744,000" in decision_reason(again)
    # Once a plan version; and never when the results themselves are wrong.
    assert isinstance(_refused(reflection("accept"), answer_only=True, reviewed_again=True), Replan)
    assert isinstance(_refused(reflection("accept"), answer_only=False), Replan)
    # Even at the replan cap: asking again costs no replan.
    assert isinstance(_refused(reflection("accept"), answer_only=True, replans=2), ReviewAgain)
    assert isinstance(_refused(reflection("accept"), answer_only=True, reviewed_again=True, replans=2), Escalate)


@given(st.booleans(), st.booleans(), st.sampled_from(["retry_step", "replan", "escalate"]))
def test_only_a_refused_accept_is_ever_reviewed_again(answer_only, reviewed_again, action):
    from planning.policy import ReviewAgain

    r = reflection(action, retry=1 if action == "retry_step" else None, feedback="f")
    assert not isinstance(_refused(r, answer_only=answer_only, reviewed_again=reviewed_again), ReviewAgain)


def _low(*, states_computed, answer_only=True, reviewed_again=False, scores=(3, 4, 5), overall_pass=True):
    r = Reflection(scores=Scores(completeness=scores[0], correctness=scores[1], format=scores[2]),
                   overall_pass=overall_pass, action="accept", answer="About 127.3%.")
    return decide(ReflectionContext(reflection=r, step_retries={}, replans=0, step_ids=frozenset({1, 2, 3}),
                                    answer_only=answer_only, states_computed=states_computed,
                                    reviewed_again=reviewed_again))


def test_a_low_score_on_an_answer_stating_the_computed_figure_is_asked_about_once_more():
    from planning.policy import ReviewAgain, decision_reason

    again = _low(states_computed=True)
    assert isinstance(again, ReviewAgain) and "completeness 3/5" in again.feedback
    assert decision_reason(again).startswith("The results hold; the reviewer is asked again")
    # Once a plan version, and only where code checked the figure and found the results sound.
    assert isinstance(_low(states_computed=True, reviewed_again=True), Replan)
    assert isinstance(_low(states_computed=False), Replan)
    assert isinstance(_low(states_computed=True, answer_only=False), Replan)


@given(st.tuples(*[st.integers(1, 5)] * 3), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_a_second_look_never_lowers_the_bar(scores, overall_pass, states_computed, answer_only, reviewed_again):
    # The acceptance bar (every score ≥ 4, overall_pass) holds whatever code found: states_computed asks again.
    d = _low(states_computed=states_computed, answer_only=answer_only, reviewed_again=reviewed_again,
             scores=scores, overall_pass=overall_pass)
    if isinstance(d, Accept):
        assert min(scores) >= 4 and overall_pass


def _omitting(r, *, answer_only=True, reviewed_again=False, contradictions=()):
    return decide(ReflectionContext(reflection=r, step_retries={}, replans=0, step_ids=frozenset({1, 2, 3}),
                                    contradictions=contradictions, answer_only=answer_only,
                                    reviewed_again=reviewed_again, omits_final="it leaves out 0.66."))


def test_an_accept_that_leaves_out_the_final_result_is_asked_about_once_as_a_note():
    from planning.policy import ReviewAgain

    assert _omitting(reflection("accept")) == ReviewAgain("it leaves out 0.66.", "unstated_figure")
    # The second verdict counts whatever it says: a hint, never a veto.
    assert _omitting(reflection("accept"), reviewed_again=True) == Accept("42")
    # Below the bar, or contradicted, the answer is not accepted either way: the usual paths decide.
    assert isinstance(_omitting(reflection("accept", (5, 2, 5))), Replan)
    assert isinstance(_omitting(reflection("accept"), contradictions=("false sum",)), ReviewAgain)
    assert _omitting(reflection("accept"), contradictions=("false sum",)).answer_fault
    assert isinstance(_omitting(reflection("accept"), answer_only=False), Accept)
