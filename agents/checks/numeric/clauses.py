"""Which part of a passage a figure comes from, and whether that part is about what a step looked up.

One sentence often states two figures of the same kind for different things: "construction began under Vespasian
around AD 72 and was completed under Titus in AD 80". A planner that types a figure into an expression can take
the wrong one (72 for the completion), and the calculation is then right about the wrong thing, which a small
reviewer accepts. The clause that holds the typed figure and the clause that names what the step looked up tell
the two apart.

    >>> text = "History: construction began around AD 72 and was completed under Titus in AD 80."
    >>> split_clauses(text)
    ['History: construction began around AD 72', 'was completed under Titus in AD 80.']
    >>> naming_clauses(text, about="Colosseum completion", title="Colosseum")
    ['was completed under Titus in AD 80.']
"""

from __future__ import annotations

import re

from planning.words import STOP_WORDS

__all__ = ["naming_clauses", "roots", "split_clauses"]

# Sentence ends, semicolons, commas and the conjunctions that join two statements. A comma inside a number
# ("2,750,000") is no boundary: a boundary comma is followed by a space.
_BOUNDARY = re.compile(r"(?<=[.;!?])\s+(?=[A-Z0-9])|;\s*|,?\s+(?:and|but|while|whereas)\s+|,\s+")
_WORD = re.compile(r"[a-z]+")
_SUFFIXES = ("ing", "ion", "ed", "es", "s")
_ROOT = 7
"""Letters a word is cut to after its suffix: "completion", "completed" and "complete" share one root, as do
"opening" and "opened"; so, harmlessly, may two unrelated words (a missed fault, never a false one: a clause
naming the step's words is taken as right)."""


def split_clauses(text: str) -> list[str]:
    """``text`` cut at sentence ends, semicolons, commas and "and"/"but"/"while"/"whereas", empty parts dropped."""
    return [part.strip() for part in _BOUNDARY.split(text) if part and part.strip()]


def roots(text: str) -> set[str]:
    """The content words of ``text`` (no stop words, no numbers), each without its suffix and cut to seven letters."""
    return {_root(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 2}


def _root(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)][:_ROOT]
    return word[:_ROOT]


def naming_clauses(text: str, *, about: str, title: str = "") -> list[str]:
    """The clauses of ``text`` that name what a step looked up (``about``), beyond the passage's ``title``: every
    clause of a passage is about its title ("Colosseum"), so only the rest ("completion") tells them apart. No
    clause when ``about`` says nothing beyond the title."""
    terms = roots(about) - roots(title)
    if not terms:
        return []
    return [clause for clause in split_clauses(text) if roots(clause) & terms]
