"""Whether an argument repair fixed how a call asks or changed what it asks about.

A tool that rejects an unknown value often lists the values it knows ("unknown company 'Globex Ltd'; known: Acme,
Initech, ..."), and a small model asked to repair the call picks one of them: the step then runs, for a different
thing, and its output reads like an answer. A repair is there to fix the form of a call — an argument's name, a
type, a format, another spelling of the same value, a value taken out of a pasted document — so a new text value
keeps something of the rejected arguments: a word, or most of its letters ("paiement" → "payment").

A repair that keeps neither is refused and the step fails with the tool's own error, which the planner sees: a
failure the user can read instead of an output about something else. The cost when the rule is wrong (a value
translated into a word with no letters in common, "Allemagne" → "Germany") is one replan, never a wrong answer.

    >>> changed_subject({"company": "Globex Ltd"}, {"company": "Initech"})
    ('Globex Ltd', 'Initech')
    >>> changed_subject({"town": "Oslo"}, {"city": "Oslo"}) is None
    True
    >>> changed_subject({"city": 2.87}, {"city": "Oslo"}) is None  # a number where a name goes: a type fix
    True
    >>> changed_subject({"service": "paiement", "week": "11"}, {"service": "payment", "week": 11}) is None
    True
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from typing import Any

from dag.refs import strings_in

__all__ = ["changed_subject"]

MIN_SIMILARITY = 0.5
"""Letters in common (difflib's ratio) that make a new value another spelling of an old one."""

_WORD = re.compile(r"\w{2,}")


def changed_subject(before: dict[str, Any], after: dict[str, Any],
                    purpose: str = "") -> tuple[str, str] | None:
    """(the rejected value, the value that replaced it) when a new text value in ``after`` shares no word and too
    few letters with the rejected arguments ``before`` and the step's ``purpose``; None when the repair kept to the
    call's subject. A call that named nothing in text (a number or null where the tool wants a name, an argument
    left out) has no subject to change: whatever text the repair puts there is left to the tool."""
    old_values = [v for v in strings_in(before) if v.strip()]
    if not old_values:
        return None
    old_text = _plain(json.dumps(before, ensure_ascii=False, default=str) + " " + purpose)
    old_words = set(_WORD.findall(old_text))
    for key, repaired in after.items():
        if key in before and not isinstance(before[key], (str, list, dict)):
            continue  # a number or null where text goes: the repair fixed a type
        for value in strings_in(repaired):
            new = _plain(value)
            if not new.strip() or new in old_text or old_words & set(_WORD.findall(new)):
                continue
            if any(difflib.SequenceMatcher(None, _plain(old), new).ratio() >= MIN_SIMILARITY for old in old_values):
                continue
            return _closest(old_values, new), value
    return None


def _closest(values: list[str], new: str) -> str:
    """The rejected value the new one most likely replaced (the arguments' only text, or the likeliest)."""
    return max(values, key=lambda old: difflib.SequenceMatcher(None, _plain(old), _plain(new)).ratio())


def _plain(text: str) -> str:
    """Case and accents folded: "Zürich" and "zurich" are one word."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if not unicodedata.combining(c))
