"""Fitting one step's output to the next tool's input without a model: the one relevant number in a passage.

A search tool returns passages; arithmetic needs numbers. Planners (small ones especially) pass the passages
straight on, ``calculator("{$1} - {$2}")``, and the calculator rejects the text. When each passage holds exactly
one number *about what its step looked up* (in a sentence that names it, years left out), that number is what the
planner meant — sound to substitute, and free. Anything less certain is left to the model's repair round.

    >>> hits = [{"doc_id": "paris", "text": "Paris: Population: Paris had a population of about 2.10 million in 2023 "
    ...          "(city proper). The wider Ile-de-France region had about 12.3 million inhabitants."}]
    >>> relevant_number(hits, "population of Paris")
    2100000.0
    >>> relevant_number("Paris had 2.10 million people in 2023 and 12.3 million in its region.", "Paris") is None
    True
"""

from __future__ import annotations

import re
from typing import Any

from agents.checks.facts import top_passage
from agents.checks.numbers import read_numbers
from planning.words import STOP_WORDS, singular

__all__ = ["relevant_number", "relevant_numbers", "top_passage"]

_SENTENCE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z0-9])")
_SHORT_TEXT = 300
_WORD = re.compile(r"[a-z0-9]+")
# An address says where a step looked, not what it looked up: its words ("example", "delete") are no topic.
_ADDRESS = re.compile(r"\b[a-z][a-z0-9+.-]*://\S*", re.IGNORECASE)


def _terms(text: str) -> set[str]:
    return {singular(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and not w.isdigit()}


def _top_text(output: Any) -> tuple[str | None, str]:
    """``top_passage``, except that a long free text is not read."""
    if isinstance(output, str) and len(output) > _SHORT_TEXT:
        # A short answer (a reasoning step's) is read; a long free text (a fetched page) is the model's to read:
        # which of its sentences is "about" the step is no longer clear.
        return None, ""
    return top_passage(output)


def _closest_sentences(text: str, terms: set[str]) -> list[str]:
    """The sentences that share the most of ``terms`` (none when no sentence shares one). A qualifier in the
    query ("city-proper population") also names other sentences ("the city proper covers 105 km²"): the one that
    names the qualifier *and* the quantity is the one meant."""
    shared = [(len(terms & _terms(sentence)), sentence) for sentence in _SENTENCE.split(text)]
    best = max((count for count, _ in shared), default=0)
    return [sentence for count, sentence in shared if count == best] if best else []


def relevant_number(output: Any, about: str) -> float | None:
    """The one number in ``output`` that a sentence about ``about`` states (scale words applied, years left
    out), or None when there is none or more than one. A number output is itself."""
    found = relevant_numbers(output, about)
    return found[0] if len(found) == 1 else None


def relevant_numbers(output: Any, about: str) -> tuple[float, ...]:
    """Every number a sentence about ``about`` states, as ``relevant_number`` weighs them (a figure written with
    a unit or scale beats a bare count), in the order written: one is the figure; two or more are the
    candidates ("metropolitan France covers about 551,695 km²; with overseas regions about 632,700 km²"), which
    still settle a comparison when all of them are above, or all below, the other thing's.

    >>> relevant_numbers("France: Area: metropolitan France covers about 551,695 km²; with overseas regions "
    ...                  "about 632,700 km².", "area of France")
    (551695.0, 632700.0)
    """
    if isinstance(output, (int, float)) and not isinstance(output, bool):
        return (float(output),)
    text, title = _top_text(output)
    # The passage is about its title, so every sentence names it: relevance is the *rest* of what was looked up
    # ("population" of "population of Paris"), or an atomic number would pass for a boiling point.
    terms = _terms(_ADDRESS.sub(" ", about)) - _terms(title)
    if text is None or not terms:
        return ()
    found: dict[float, bool] = {}  # value → written with a unit or scale ("828 m" beside "163 floors")
    for sentence in _closest_sentences(text, terms):
        for number in read_numbers(sentence):
            if number.kind == "year":
                continue
            value = round(number.value, 6)
            found[value] = found.get(value, False) or number.measured
    if len(found) > 1:  # a measured figure beats a bare count; two measured figures stay ambiguous
        found = {v: m for v, m in found.items() if m}
    return tuple(found)
