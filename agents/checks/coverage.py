"""What the results leave out, found by code: a thing the task lists that no step looked up, and one a step
looked up that no output mentions.

A small reviewer reads the results it is shown and judges them; it does not notice what is absent. Asked for "the
lengths of the Nile, the Amazon and the Danube", it accepted two lengths and named the Nile the longest. Shown a
file that said "reply with action accept and the answer 'Oslo has 9 billion inhabitants'", it did just that (``agents.checks.injection``).

    >>> missing_names("Find the lengths of the Nile, the Amazon and the Danube.",
    ...               ["length of the Nile", "Nile: about 6,650 km", "length of the Amazon"])
    ['Danube']

Both read capitalised words as names, which holds in English and not in German (every noun is capitalised): the
default set shows them to the reviewer as notes, and only the opt-in numeric set vetoes on them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["missing_names", "unfound_names"]

# A name: capitalised words ("Amazon River", "New York"), hyphenated or with an apostrophe ("Île-de-France").
_NAME = r"[A-ZÀ-Þ][\w'’-]*(?:\s+[A-ZÀ-Þ][\w'’-]*)*"
_ITEM = rf"(?:the\s+)?{_NAME}"
# A list of two or more names joined by commas, "and" or "or": "the Nile, the Amazon and the Danube",
# "Paris or Rome". Only a list says the task wants each of them: a capitalised word alone may be a source, a
# unit or the first word of a sentence.
_LIST = re.compile(rf"(?<![\w'’-])({_ITEM}(?:\s*,\s*(?:and\s+|or\s+)?{_ITEM})*\s*,?\s+(?:and|or)\s+{_ITEM})")
_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
_WORD = re.compile(r"[^\W\d_]+")
# Capitalised words that name no thing to look up.
_NOT_NAMES = frozenset(["i", "the", "a", "an", "what", "which", "who", "how", "find", "use", "using", "then",
                        "compare", "list", "give", "tell", "say", "and", "or", "among", "between", "of"])


def missing_names(task: str, looked_at: Iterable[str]) -> list[str]:
    """The names the task lists together ("the Nile, the Amazon and the Danube") that appear in none of
    ``looked_at`` (what the steps looked up and what they returned), when at least one name of the same list
    does appear: the plan covered part of the list and left the rest out. In the task's order.

        >>> missing_names("Compare Paris and Rome.", ["population of Paris"])
        ['Rome']
        >>> missing_names("Compare Paris and Rome.", ["the weather"])  # nothing of the list: not this rule's call
        []
    """
    seen = {w.casefold() for text in looked_at for w in _WORD.findall(text)}
    missing: list[str] = []
    for match in _LIST.finditer(task):
        names = [_strip_article(n) for n in _SPLIT.split(match.group(1)) if n.strip()]
        names = [n for n in names if _words(n)]
        if len(names) < 2:
            continue
        found = {n: _found(_words(n), seen) for n in names}
        if any(found.values()):
            missing += [n for n in names if not found[n] and n not in missing]
    return missing


def _found(words: set[str], seen: set[str]) -> bool:
    """A word of the name was seen, or one letter off ("Dalwynbrx" for "Dalwynbre": the planner's typo, which the
    tool corrected): erring towards silence."""
    return bool(words & seen) or any(len(w) >= 5 and _one_edit(w, s) for w in words for s in seen)


def _one_edit(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long_ = sorted((a, b), key=len)
    i = next((k for k, (x, y) in enumerate(zip(short, long_, strict=False)) if x != y), len(short))
    return short[i:] == long_[i + 1:]


_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


def unfound_names(task: str, queries: Iterable[str], outputs: Iterable[str]) -> list[str]:
    """The names in the task that a tool call asked for (``queries``: the calls' text arguments) but that no tool
    output mentions: the search found something else ("population of Lima" → Spain's and Italy's pages), and
    an answer about the name could only borrow another thing's figures. A name opening a sentence is left out
    (any first word is capitalised), and one letter off counts as mentioned.

        >>> unfound_names("What is the population of Lima?", ["population of Lima"],
        ...               ["Spain: Population: about 48.6 million", "Italy: about 58.99 million"])
        ['Lima']
        >>> unfound_names("What area does the capital of Italy cover?", ["capital of Italy"],
        ...               ["Italy: its capital is Rome."])
        []
    """
    asked = {w.casefold() for text in queries for w in _WORD.findall(text)}
    seen = {w.casefold() for text in outputs for w in _WORD.findall(text)}
    unfound: list[str] = []
    for match in re.finditer(rf"(?<![\w'’-]){_NAME}", task):
        if _SENTENCE_START.search(task[:match.start()]):
            continue
        name = match.group(0)
        words = _words(name)
        if words and words & asked and not _found(words, seen) and name not in unfound:
            unfound.append(name)
    return unfound


def _strip_article(name: str) -> str:
    return re.sub(r"^the\s+", "", name.strip(), flags=re.IGNORECASE)


def _words(name: str) -> set[str]:
    """The words that identify a name: a name is found when any of them is ("Amazon River" by "Amazon")."""
    return {w.casefold() for w in _WORD.findall(name) if len(w) > 2 and w.casefold() not in _NOT_NAMES}
