"""The terse router reply (router/v2): one line, translated into the wire ``RouterDecision``.

The JSON decision is ~30 output tokens (keys, quotes, a null answer) and the router's call runs beside the
planner's, so its decode time decides when the first planned step may start. The terse form is a route, a
confidence and the rest of the line::

    plan 0.95: needs two population lookups and a subtraction
    direct 0.9: 2 + 2 is 4.
    clarify 0.8: Which Paris do you mean, France or Texas?
    refuse 0.95: I cannot help with making weapons.

After ``plan`` the rest is the reason; after the other routes it is what the user is told (the answer, the
question, the explanation), kept as both ``answer`` and ``reason``.

    >>> parse_terse_route("plan 0.95: needs two lookups")
    RouterDecision(route='plan', confidence=0.95, reason='needs two lookups', answer=None)
    >>> parse_terse_route("direct 1: 4").answer
    '4'
"""

from __future__ import annotations

import re

from planning.errors import LLMOutputError
from planning.models import RouterDecision

__all__ = ["find_route_line", "parse_terse_route", "render_terse_route"]

_LINE = re.compile(r"^\s*(plan|direct|clarify|refuse)\b[ \t]*(\d+(?:\.\d+)?|\.\d+)?[ \t]*(?:[:—-][ \t]*)?(.*)$",
                   re.IGNORECASE | re.DOTALL)


def find_route_line(text: str) -> bool:
    """Whether ``text`` starts like a terse decision (and not like a JSON object)."""
    return _LINE.match(text.strip().split("\n", 1)[0]) is not None if text.strip() else False


def parse_terse_route(text: str) -> RouterDecision:
    match = _LINE.match(text.strip())
    if match is None:
        raise LLMOutputError("Start your reply with the route and a confidence, e.g. 'plan 0.9: <reason>' "
                             "(routes: plan, direct, clarify, refuse).", raw=text)
    route, confidence, rest = match.group(1).lower(), match.group(2), " ".join(match.group(3).split())
    if confidence is None:
        raise LLMOutputError(f"Give a confidence from 0 to 1 after the route, e.g. '{route} 0.9: …'.", raw=text)
    value = float(confidence)
    if not 0.0 <= value <= 1.0:
        raise LLMOutputError(f"The confidence must be between 0 and 1, not {confidence}.", raw=text)
    if route != "plan" and not rest:
        raise LLMOutputError(f"After '{route} {confidence}:' write what the user should read (the answer, the "
                             "question or the explanation).", raw=text)
    answer = None if route == "plan" else rest
    return RouterDecision(route=route, confidence=value, reason=rest, answer=answer)  # type: ignore[arg-type]


def render_terse_route(decision: RouterDecision) -> str:
    """The terse line for a decision (the simulated model, examples)."""
    rest = decision.reason if decision.route == "plan" else (decision.answer or decision.reason)
    rest = " ".join(rest.split())
    return f"{decision.route} {decision.confidence:g}" + (f": {rest}" if rest else "")
