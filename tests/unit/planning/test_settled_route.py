"""``planning.settled_route``: a plan route settles as soon as its confidence is fully written, never before, and
nothing else ever settles (every other reply is read and parsed whole)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from planning.settled_route import settled_plan_confidence

ROUTES = st.sampled_from(["plan", "direct", "clarify", "refuse"])
CONFIDENCES = st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda c: round(c, 3))
SPACES = st.sampled_from(["", " ", "\n  "])


@st.composite
def replies(draw: st.DrawFn) -> tuple[str, str, float]:
    route, confidence = draw(ROUTES), draw(CONFIDENCES)
    sp = draw(SPACES)
    reason = draw(st.text(max_size=40))
    answer = None if route == "plan" else draw(st.text(max_size=20))
    text = (f'{{{sp}"route":{sp}"{route}",{sp}"confidence":{sp}{json.dumps(confidence)},{sp}'
            f'"reason":{sp}{json.dumps(reason)},{sp}"answer":{sp}{json.dumps(answer)}{sp}}}')
    return text, route, confidence


@given(replies(), st.floats(min_value=0.0, max_value=1.0))
def test_a_prefix_settles_only_a_trusted_plan_and_only_once_its_confidence_is_written(
        reply: tuple[str, str, float], min_confidence: float) -> None:
    text, route, confidence = reply
    head_end = text.index(json.dumps(confidence), text.index('"confidence"')) + len(json.dumps(confidence))
    trusted = route == "plan" and confidence >= min_confidence
    for cut in range(len(text) + 1):
        settled = settled_plan_confidence(text[:cut], min_confidence=min_confidence)
        if not trusted or cut <= head_end:
            assert settled is None, text[:cut]
        elif text[head_end:cut].strip():
            assert settled == confidence, text[:cut]


def test_examples() -> None:
    assert settled_plan_confidence('{"route": "plan", "confidence": 0.95, "reason": "two', min_confidence=0.6) == 0.95
    assert settled_plan_confidence('{"route": "plan", "confidence": 1}', min_confidence=0.6) == 1.0
    # not yet: the number may go on, or the route is not written in full
    assert settled_plan_confidence('{"route": "plan", "confidence": 0.95', min_confidence=0.6) is None
    assert settled_plan_confidence('{"route": "pla', min_confidence=0.6) is None
    # below the bar the route becomes a question whose reason the user is shown: read it whole
    assert settled_plan_confidence('{"route": "plan", "confidence": 0.4, ', min_confidence=0.6) is None
    # out of range or another field order: left to the full parse and its error messages
    assert settled_plan_confidence('{"route": "plan", "confidence": 1.5, ', min_confidence=0.6) is None
    assert settled_plan_confidence('{"confidence": 0.9, "route": "plan", ', min_confidence=0.6) is None
