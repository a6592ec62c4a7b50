"""The reflector's terse reply: translation into the wire Reflection, JSON still accepted, every error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning import parse_reflection
from planning.errors import LLMOutputError
from planning.models import Reflection, RetryDetails, Scores
from planning.terse_reflection import parse_terse_reflection, render_terse_reflection
from support.tiers import examples


def test_accept_with_a_multi_line_answer_in_a_fence() -> None:
    r = parse_reflection("```\n**accept 5 5 4**\nanswer: Paris is larger.\nBy 0.7 million.\n```")
    assert (r.action, r.overall_pass, r.scores, r.answer) == (
        "accept", True, Scores(completeness=5, correctness=5, format=4), "Paris is larger.\nBy 0.7 million.")


@pytest.mark.parametrize("reply, action, feedback, step", [
    ("retry 4 2 4 step 3: use 'Dalwynbre'", "retry_step", "use 'Dalwynbre'", 3),
    ("Retry_step 4 2 4 step 1", "retry_step", "", 1),
    ("replan 2 2 4: look up the capital first", "replan", "look up the capital first", None),
    ("escalate 3 3 3: which year?", "escalate", "which year?", None),
])
def test_other_actions(reply: str, action: str, feedback: str, step: int | None) -> None:
    r = parse_reflection(reply)
    assert (r.action, r.feedback, r.overall_pass, r.answer) == (action, feedback, False, None)
    assert (r.retry_details.step_id if r.retry_details else None) == step


def test_json_replies_are_still_read() -> None:
    r = parse_reflection('{"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": true, '
                         '"action": "accept", "retry_details": null, "feedback": "", "answer": "accept 5 5 5"}')
    assert r.answer == "accept 5 5 5"


@pytest.mark.parametrize("reply, message", [
    ("Looks fine to me.", "no verdict line"),
    ("accept 5 5", "is malformed"),
    ("accept 5 5 5 extra", "is malformed"),
    ("accept 5 5 5", "'accept' needs the answer"),
    ("accept 5 5 5\nanswer:   ", "'accept' needs the answer"),
    ("retry 4 2 4: fix it", "'retry' needs the step"),
    ("replan 2 2 4 step 2: x", "only 'retry' names a step"),
    ("accept 6 5 5\nanswer: x", "scores are 1-5"),
    ("escalate 0 3 3: ?", "scores are 1-5"),
])
def test_every_malformed_reply_says_how_to_write_it(reply: str, message: str) -> None:
    with pytest.raises(LLMOutputError) as err:
        parse_terse_reflection(reply)
    assert message in str(err.value) and "'accept 5 5 5'" in str(err.value)


_TEXT = st.text(alphabet="abc xyz'?.:5", max_size=20).map(lambda t: " ".join(t.split()))


@st.composite
def reflections(draw: st.DrawFn) -> Reflection:
    action = draw(st.sampled_from(["accept", "retry_step", "replan", "escalate"]))
    scores = Scores(**{k: draw(st.integers(1, 5)) for k in ("completeness", "correctness", "format")})
    text = draw(_TEXT)
    answer = draw(_TEXT.filter(bool)) if action == "accept" else draw(st.one_of(st.none(), _TEXT.filter(bool)))
    details = RetryDetails(step_id=draw(st.integers(1, 99)), modification=text) if action == "retry_step" else None
    return Reflection(scores=scores, overall_pass=action == "accept", action=action, retry_details=details,
                      feedback=text, answer=answer)


@settings(max_examples=examples(200), deadline=None)
@given(reflections())
def test_rendered_terse_replies_read_back_to_the_same_reflection(r: Reflection) -> None:
    assert parse_reflection(render_terse_reflection(r)) == r
