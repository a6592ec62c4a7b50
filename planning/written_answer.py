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
    grouping mark; a whole number as its digits. Forms of fewer than two digits are left out (any "1" would
    match), and so are forms rounded to nothing but zeros ("0.0" says nothing of 0.0012); a figure that has none
    left gets None. Written as llama.cpp's grammar converter reads patterns: one-character classes, no escapes, no
    quote or backslash outside the figure (a JSON string).

        >>> [bool(re.fullmatch(figure_pattern(0.660694576805), a)) for a in ("It is 0,66 times.", "It is 0.6.")]
        [True, False]
        >>> bool(re.fullmatch(figure_pattern(-23903.0), "It fell by 23,903.")), figure_pattern(3.0)
        (True, None)
    """
    if not math.isfinite(value):
        return None
    magnitude = abs(value)
    forms = [_digits(f"{magnitude:.{d}f}") for d in range(5)]
    if magnitude == int(magnitude):
        forms = [forms[0]]
    else:
        forms = [f for f in forms[1:] if "[" in f and sum(c.isdigit() for c in f) >= 2]
        forms += [_digits(f"{magnitude:.0f}")] if magnitude >= 10 else []
    forms = [f for f in dict.fromkeys(forms) if sum(c.isdigit() for c in f) >= 2 and any(c in "123456789" for c in f)]
    if not forms:
        return None
    return '^[^"\\\\]*(' + "|".join(forms) + ')[^"\\\\]*$'


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
