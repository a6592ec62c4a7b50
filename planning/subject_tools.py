"""Which tools are about the kind of thing a task asks about: a hint for a planner that computed from nowhere.

A small planner that does not see which tool gives a fact computes with figures from its memory instead
(``planning.blind_calls``): "inhabitants" with a tool described as "the encyclopedia's passage about a city", a
German task with English descriptions. Told only that its figures came from nowhere, the embedded 1.5B planner
wrote the same plan again; told which tool to use, it looked the facts up on every such dev repair prompt tried.
Asked for the tool itself, the model named a wrong one where it mattered (a museum tool for a city's inhabitants);
asked for the kind of thing, it said "a city", so the model names the kind in English (one short, constrained
reply) and code finds the tools whose own catalog lines say that word. The kind can be wrong too ("a company" for
a product's churn rate, end to end on the dev half, docs/generality.md), which is why this is a suggestion in the
repair round's note that the planner may decline, and why planner/v13, the template that asks, is an option.
Precondition of a match: every content word of the kind is a word of the tool's catalog entry (a plural's "s"
aside).

    >>> entries = {"encyclopedia": "- encyclopedia(topic: str) -> text: The encyclopedia's passage about a city.",
    ...            "visitors": "- visitors(site: str) -> number: Visitors counted at a museum or garden.",
    ...            "calculator": "- calculator(expression: str) -> number: Evaluate arithmetic."}
    >>> tools_about("a city", entries, reads={"encyclopedia", "visitors", "calculator"}, exclude={"calculator"})
    ['encyclopedia']
    >>> subject_note("a city", ["encyclopedia"]).split(". ")[0]
    'the tool whose description is about a city: encyclopedia'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from planning.errors import PlanningError
from planning.parse import json_schema_for, parse_model
from planning.words import STOP_WORDS, singular

__all__ = ["MAX_SUBJECT_TOOLS", "SUBJECT_CHARS", "Subject", "parse_subject", "subject_note", "subject_schema",
           "tools_about"]

SUBJECT_CHARS = 40
"""The longest kind of thing a reply may name ("a test suite", "a Python package" are short)."""
MAX_SUBJECT_TOOLS = 3
"""More tools than this say the word: it names nothing in particular ("data", "a number"), so no hint."""

_WORD = re.compile(r"[^\W\d_]+")


class Subject(BaseModel):
    """The subject prompt's reply: the kind of thing the task's facts are about, in English."""

    model_config = ConfigDict(extra="ignore")

    about: str = Field(max_length=SUBJECT_CHARS)


def subject_schema() -> dict[str, Any]:
    return json_schema_for(Subject)


def parse_subject(text: str) -> str:
    """The kind the reply names, stripped (a ``PlanningError`` on a reply that is not the object)."""
    about = parse_model(text, Subject).about.strip()
    if not about:
        raise PlanningError('"about" is empty: name the kind of thing the task asks about, e.g. "a city"')
    return about


def _words(text: str) -> set[str]:
    return {singular(w.lower()) for w in _WORD.findall(text)}


def tools_about(kind: str, entries: Mapping[str, str], *, reads: Collection[str],
                exclude: Collection[str] = ()) -> list[str]:
    """The read tools (not in ``exclude``) whose catalog entry says every content word of ``kind``, in catalog
    order; none when more than ``MAX_SUBJECT_TOOLS`` do, or ``kind`` has no content word.

        >>> entries = {"run_tests": "- run_tests(suite: str) -> text: Run one test suite.",
        ...            "revenue": "- revenue(company: str) -> text: A company's revenue in one quarter."}
        >>> tools_about("test suites", entries, reads=entries), tools_about("companies", entries, reads=entries)
        (['run_tests'], ['revenue'])
        >>> tools_about("the", entries, reads=entries)
        []
    """
    wanted = _words(kind) - STOP_WORDS
    if not wanted:
        return []
    found = [name for name, entry in entries.items()
             if name in reads and name not in exclude and wanted <= _words(entry)]
    return found if len(found) <= MAX_SUBJECT_TOOLS else []


def subject_note(kind: str, tools: Collection[str]) -> str:
    """The repair round's extra note (to follow "- "), naming ``tools`` for facts about ``kind``."""
    names = ", ".join(tools)
    if len(tools) == 1:
        return (f"the tool whose description is about {kind}: {names}. Look the facts up with it, then compute "
                "from its results.")
    return (f"the tools whose descriptions are about {kind}: {names}. Look the facts up with the one that gives "
            "them, then compute from its results.")
