"""Word forms shared by code that matches words: just enough to let a plural meet its singular.

    >>> [singular(w) for w in ("cities", "rivers", "glass", "bus", "ties", "2010")]
    ['city', 'river', 'glass', 'bus', 'tie', '2010']
"""

from __future__ import annotations

__all__ = ["singular"]


def singular(word: str) -> str:
    """``word`` with an English plural's ending folded ("cities" → "city", "rivers" → "river"); a word of three
    letters or fewer, one ending in "ss", and anything else are left as they are. Case is the caller's."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
