"""The reply of a call that only writes the answer (prompts/answer): one JSON object with one string, which may be
held to state a given figure (``figure_pattern``).

    >>> parse_written_answer('{"answer": "0.66"}')
    '0.66'
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from planning.errors import PlanningError
from planning.parse import json_schema_for, parse_model

__all__ = ["ANSWER_CHARS", "WrittenAnswer", "figure_pattern", "parse_written_answer", "written_answer_schema"]

ANSWER_CHARS = 600
"""The longest answer the call may write: a sentence or two with its figures, held to it by the server."""


class WrittenAnswer(BaseModel):
    """The answer prompt's reply."""

    model_config = ConfigDict(extra="ignore")

    answer: str = Field(max_length=ANSWER_CHARS)


def written_answer_schema(pattern: str | None = None) -> dict[str, Any]:
    """The reply's schema; with ``pattern`` (``figure_pattern``), the server holds the answer to it."""
    schema = json_schema_for(WrittenAnswer)
    if pattern is not None:
        schema["properties"]["answer"]["pattern"] = pattern
    return schema


def figure_pattern(value: float) -> str | None:
    """A regular expression for an answer that writes ``value``'s magnitude somewhere in it: rounded to one to four
    decimals (most longer writings start with one of them), with either decimal mark and, from four digits on, any
    grouping mark; a whole number as its digits. The figure stands as a number of its own: after a space, a
    bracket, a currency or a sign (or opening the answer), and after a whole number no digit but one or two zeros
    after a decimal mark ("3.0"), so "13", "3.5" or "3.000" does not write 3 and a one-digit figure can be held to
    as well. It comes within the answer's first 200 characters. Forms rounded to nothing but zeros are left out
    ("0.0" says nothing of 0.0012), so a figure that has none left, zero among them, gets None. Written as
    llama.cpp's grammar converter reads patterns: character classes, no escapes but a backslash in a class, no
    quote or backslash outside the figure (a JSON string).

        >>> [bool(re.fullmatch(figure_pattern(0.660694576805), a)) for a in ("It is 0,66 times.", "It is 0.6.")]
        [True, False]
        >>> bool(re.fullmatch(figure_pattern(-23903.0), "It fell by 23,903.")), figure_pattern(0.0)
        (True, None)
        >>> [bool(re.fullmatch(figure_pattern(3.0), a)) for a in ("By 3.", "By 3.0 in all", "By 13.", "By 3.5.")]
        [True, True, False, False]
    """
    if not math.isfinite(value):
        return None
    magnitude = abs(value)
    wholes = [_digits(f"{magnitude:.0f}")] if magnitude == int(magnitude) or magnitude >= 10 else []
    fractions = [] if magnitude == int(magnitude) else [_digits(f"{magnitude:.{d}f}") for d in range(1, 5)]
    fractions = [f for f in fractions if sum(c.isdigit() for c in f) >= 2]
    forms = [f + _AFTER_WHOLE for f in wholes if _not_zeros(f)]
    forms += [f + _ANYTHING for f in dict.fromkeys(fractions) if _not_zeros(f)]
    return f"^{_BEFORE}({'|'.join(forms)})$" if forms else None


_ANYTHING = '[^"\\\\]*'
_LEAD_CHARS = 200
"""The figure comes within the first two sentences or so: left free, the 1.5B model wrote on around it (about
the figures it had, lines of its prompt) until its 200 tokens ran out, and the look fell back to the whole review."""
_BEFORE = f'([^"\\\\]{{0,{_LEAD_CHARS - 1}}}[ ($€£¥=:~≈+−«¿-])?'
"""Up to the figure: text ending in a space, a bracket, a currency or a sign (or nothing: the answer opens with it),
so the figure is never glued to a word or to another number."""
_AFTER_WHOLE = f'([.,]00?)?[.,]?([^"0-9.,\\\\]{_ANYTHING})?'
"""After a whole number: a decimal mark and one or two zeros at most (three would be a thousands group: "3.000" is
3000 in German), a mark that ends the sentence or the clause, then a character no number has, then anything."""


def _not_zeros(form: str) -> bool:
    return any(c in "123456789" for c in form)


def _digits(text: str) -> str:
    """One written number as a pattern: its decimal mark either one, its whole part grouped by threes or not."""
    whole, _, fraction = text.partition(".")
    groups = [whole[max(0, i - 3):i] for i in range(len(whole), 0, -3)][::-1]
    out = "[., ]?".join(groups) if len(whole) >= 4 else whole
    return out + ("[.,]" + fraction if fraction else "")


def parse_written_answer(text: str) -> str:
    """The answer the reply writes, stripped (a ``PlanningError`` on a reply that is not the object, or an empty
    answer)."""
    answer = parse_model(text, WrittenAnswer).answer.strip()
    if not answer:
        raise PlanningError('"answer" is empty: write the answer to the task from the results')
    return answer
