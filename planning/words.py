"""Words shared by code that matches words: the one stop-word list, and just enough of word forms to let a plural
meet its singular.

    >>> [singular(w) for w in ("cities", "rivers", "glass", "bus", "ties", "2010")]
    ['city', 'river', 'glass', 'bus', 'tie', '2010']
    >>> sorted(w for w in "the population of Paris".split() if w not in STOP_WORDS)
    ['Paris', 'population']
"""

from __future__ import annotations

__all__ = ["STOP_WORDS", "singular"]

STOP_WORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "is", "it", "its", "of", "on", "or",
    "the", "to", "was", "what", "which", "with", "look", "find", "search", "up", "get", "step", "result", "results",
    "value", "number", "were", "when", "about", "around", "than", "that", "this", "had", "has", "have", "their",
    "some", "one"])
"""English function words and the words a plan writes around a look-up ("find", "step", "result"): they say
nothing about what a step looked up, what a clause is about or what kind of thing a task asks. Checks that
match more narrowly add their own domain's words to it."""


def singular(word: str) -> str:
    """``word`` with an English plural's ending folded ("cities" → "city", "rivers" → "river"); a word of three
    letters or fewer, one ending in "ss", and anything else are left as they are. Case is the caller's."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
