"""The terse router line parses into the wire decision, and bad lines say how to fix them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning.errors import LLMOutputError
from planning.models import RouterDecision
from planning.parse import parse_router_decision
from planning.terse_route import render_terse_route


@pytest.mark.parametrize(("text", "route", "answer"), [
    ("plan 0.95: needs two lookups", "plan", None),
    ("Direct 1: 2 + 2 is 4.", "direct", "2 + 2 is 4."),
    ("clarify 0.7 — Which Paris?", "clarify", "Which Paris?"),
    ("refuse .9: I will not help with that.\n", "refuse", "I will not help with that."),
])
def test_terse_lines_become_wire_decisions(text: str, route: str, answer: str | None) -> None:
    decision = parse_router_decision(text)
    assert (decision.route, decision.answer) == (route, answer)


@pytest.mark.parametrize(("text", "says"), [
    ("plan: needs tools", "confidence"),
    ("direct 0.9:", "what the user should read"),
    ("plan 1.5: x", "between 0 and 1"),
    ("maybe 0.5: x", "JSON"),
])
def test_bad_lines_are_explained(text: str, says: str) -> None:
    with pytest.raises(LLMOutputError, match=says):
        parse_router_decision(text)


def test_json_decisions_still_parse() -> None:
    text = '{"route": "direct", "confidence": 0.9, "reason": "trivial", "answer": "4"}'
    assert parse_router_decision(text).answer == "4"


@given(st.sampled_from(["plan", "direct", "clarify", "refuse"]), st.floats(0, 1),
       st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip))
def test_render_then_parse_round_trips(route: str, confidence: float, text: str) -> None:
    words = " ".join(text.split())
    decision = RouterDecision(route=route, confidence=round(confidence, 3), reason=words,
                              answer=None if route == "plan" else words)
    again = parse_router_decision(render_terse_route(decision))
    assert (again.route, again.confidence, again.answer) == (decision.route, decision.confidence, decision.answer)
    if route != "plan" or words:
        assert again.reason == decision.reason
