"""The one stop-word list: words that say nothing about what a step looked up or what a clause is about.

    >>> sorted(w for w in "the population of Paris".split() if w not in STOP_WORDS)
    ['Paris', 'population']
"""

from __future__ import annotations

__all__ = ["STOP_WORDS"]

STOP_WORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "is", "it", "its", "of", "on", "or",
    "the", "to", "was", "what", "which", "with", "look", "find", "search", "up", "get", "step", "result", "results",
    "value", "number", "were", "when", "about", "around", "than", "that", "this", "had", "has", "have"])
"""English function words and the words a plan writes around a look-up ("find", "step", "result")."""
