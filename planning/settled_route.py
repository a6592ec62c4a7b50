"""A plan route read from the start of the router's JSON reply, before the model writes its reason.

The router's JSON object writes ``"route"`` and ``"confidence"`` first (the schema's order, which the embedded
server's grammar keeps). Once both are written and the route is a trusted plan, nothing after them changes
what happens next: the reason is shown, not read, and a plan route's answer is null. On the embedded 1.5B model
those two fields are ~25 of the router's ~38 output tokens, ~2 s of decoding before the planner may start, so
``Router`` stops reading there when ``RouterOptions.stop_at_plan`` is set. Any other route is read to the end:
a direct answer, a question back or a refusal *is* the text after the confidence, and a plan below the
confidence bar becomes a question whose reason the user is shown.

A number is settled only when something follows it (``0.9`` may still become ``0.95``):

    >>> settled_plan_confidence('{"route": "plan", "confidence": 0.95, "rea', min_confidence=0.6)
    0.95
    >>> settled_plan_confidence('{"route": "plan", "confidence": 0.9', min_confidence=0.6) is None
    True
    >>> settled_plan_confidence('{"route": "direct", "confidence": 0.95, ', min_confidence=0.6) is None
    True
"""

from __future__ import annotations

import re

__all__ = ["STOPPED_REASON", "settled_plan_confidence"]

STOPPED_REASON = "not written: the reply was stopped once it had chosen to plan"
"""The reason a stopped router decision carries, so traces say why there is none."""

_PLAN_HEAD = re.compile(
    r'\s*\{\s*"route"\s*:\s*"plan"\s*,\s*"confidence"\s*:\s*(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*[,}]')


def settled_plan_confidence(text: str, *, min_confidence: float) -> float | None:
    """The confidence of a plan route that ``text`` (a prefix of the router's JSON reply) has fully written,
    when it is trusted (``min_confidence`` ≤ it ≤ 1); None while undecided, and for any other route or value
    (the whole reply is then read and parsed as usual, errors included)."""
    match = _PLAN_HEAD.match(text)
    if match is None:
        return None
    confidence = float(match.group(1))
    return confidence if min_confidence <= confidence <= 1.0 else None
