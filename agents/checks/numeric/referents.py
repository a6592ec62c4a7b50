"""Whether a task names what it asks about, or points at something only an earlier turn could name.

The router's "clarify" route is for a task that points at something it never names ("How big is it?", "Compare
them", "Fix the file", "as last time"). With one worked example per route in its prompt (router/v6), the 1.5B
model also asked back on tasks that name everything: "Which covers the larger area, Cairo or France?" →
clarify, "'Cairo' and 'France' are never named" (its example's wording). A task that names things with proper
names and holds no word that points elsewhere leaves nothing to ask; ``planned_route`` plans it. Capitalised
words are names in English, not in German (every noun is capitalised), so only the opt-in numeric set does this.

    >>> named_only("Which covers the larger area, Cairo or France?")
    ('Cairo', 'France')
    >>> named_only("How big is it compared to Paris?")
    ()
    >>> named_only("Compare them and tell me which one is better.")
    ()
"""

from __future__ import annotations

import re

from planning.models import Route, RouterDecision
from planning.policy import effective_route

__all__ = ["named_only", "planned_route"]

# Words that point at something the text does not name: a pronoun, "the other", "same", "last time", "the
# file". Conservative on purpose: a relative "that" ("the city that is larger") also keeps a clarify standing;
# "that of" ("the area of Spain than that of Vienna") points back inside the task itself.
_POINTING = re.compile(
    r"\b(?:it|its|they|them|their|this|that(?! of\b)|these|those(?! of\b)|he|she|him|his|her|other|others|same|again|"
    r"last time|before|previous(?:ly)?|earlier|above|below|mentioned|the (?:file|one|two|thing|document|list))\b",
    re.IGNORECASE)
# A capitalised word that does not open the text or a sentence: a proper name ("Cairo", "Mount Everest").
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)(?<![.!?])\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
_FIRST_WORD = re.compile(r"^\W*\w+")


def named_only(task: str) -> tuple[str, ...]:
    """The proper names ``task`` asks about, when it names at least one and no word of it points at something
    else; () when a word points elsewhere or nothing is named (then asking back may be right)."""
    if _POINTING.search(task):
        return ()
    body = _FIRST_WORD.sub(lambda m: " " * len(m.group(0)), task, count=1)
    return tuple(dict.fromkeys(m.group(0) for m in _NAME.finditer(body)))


def planned_route(decision: RouterDecision, min_confidence: float, task: str) -> Route:
    """The route the router takes with the numeric set: ``planning.policy.effective_route``, except that a
    "clarify" for a task that names what it asks about and points at nothing else is planned.

        >>> planned_route(RouterDecision(route="clarify", confidence=0.9), 0.6, "Which is taller, K2 or Denali?")
        'plan'
        >>> planned_route(RouterDecision(route="clarify", confidence=0.9), 0.6, "Which of them is taller?")
        'clarify'
    """
    if decision.route == "clarify" and named_only(task):
        return "plan"
    return effective_route(decision, min_confidence)
