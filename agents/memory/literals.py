"""The literals of a task (quoted strings, numbers, capitalised names) and its shape key.

A plan template lifts the literals a task shares with its plan into parameters; two tasks have the same
*shape* when they read the same once every literal is replaced by its kind. Both steps are pure and
deterministic: the same text always yields the same literals in the same order.

Example:
    >>> [(l.kind, l.text) for l in extract_literals('Is Mont Blanc higher than 4,000 m? Search "alps"')]
    [('name', 'Mont Blanc'), ('number', '4,000'), ('name', 'Search'), ('quoted', 'alps')]
    >>> shape_key("Which is bigger, Paris or Rome,  and by how much?")
    'which is bigger, <name> or <name>, and by how much'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["LiteralKind", "TaskLiteral", "extract_literals", "parse_number", "shape_key"]

LiteralKind = Literal["quoted", "number", "name"]

_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|(?<!\w)\'([^\'\n]{1,200})\'(?!\w)')
_NUMBER = re.compile(r"(?<![\w.,-])-?\d+(?:,\d{3})*(?:\.\d+)?(?![\w]|[.,]\d)")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s?$")
# Capitalised only because they start a sentence or a question, or are pronouns: never a name.
_NOT_NAMES = frozenset(["a", "an", "and", "are", "as", "at", "but", "by", "can", "could", "did", "do", "does", "for", "from", "give", "how", "i", "if", "in", "is", "it", "list", "may", "me", "might", "my", "of", "on", "or", "our", "please", "show", "should", "tell", "that", "the", "then", "there", "these", "this", "those", "to", "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "will", "with", "would", "you", "your"])
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n]\s*)\s*$")
_TRAILING = re.compile(r"[\s?.!]+$")


@dataclass(frozen=True, slots=True)
class TaskLiteral:
    """``text`` is the value as a plan would use it (a quoted literal without its quotes); ``start``/``end``
    span the whole literal in the task, quotes included."""

    kind: LiteralKind
    text: str
    start: int
    end: int


def _capitalised_words(task: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of capitalised words outside ``taken``; a possessive ending ("Paris's") is not part of the word."""
    spans = []
    for m in _WORD.finditer(task):
        if m.group()[0].isupper() and all(m.end() <= a or m.start() >= b for a, b in taken):
            spans.append((m.start(), m.start() + len(_POSSESSIVE.sub("", m.group()))))
    return spans


def _names(task: str, taken: list[tuple[int, int]]) -> list[TaskLiteral]:
    """Runs of capitalised words separated by single spaces, minus leading non-name words ("Which", "Is")."""
    runs: list[list[tuple[int, int]]] = []
    for start, end in _capitalised_words(task, taken):
        # A possessive leaves "'s " between the words, so "Paris's Louvre" is two names. A sentence's first
        # word is capitalised anyway, so it stands alone: "Compare Paris" is "Compare" and "Paris".
        prev = runs[-1][-1] if runs else None
        if prev and task[prev[1]:start] == " " and not (len(runs[-1]) == 1 and _SENTENCE_START.search(task[:prev[0]])):
            runs[-1].append((start, end))
        else:
            runs.append([(start, end)])
    found = []
    for run in runs:
        while run and task[run[0][0]:run[0][1]].casefold() in _NOT_NAMES:
            run = run[1:]
        if run:
            found.append(TaskLiteral("name", task[run[0][0]:run[-1][1]], run[0][0], run[-1][1]))
    return found


def extract_literals(task: str) -> tuple[TaskLiteral, ...]:
    """Every literal of ``task`` in order. Quoted text wins over what is inside it; numbers inside names
    ("COVID-19") belong to the name."""
    quoted = [TaskLiteral("quoted", next(g for g in m.groups() if g is not None), m.start(), m.end())
              for m in _QUOTED.finditer(task)]
    taken = [(q.start, q.end) for q in quoted]
    names = _names(task, taken)
    taken += [(n.start, n.end) for n in names]
    numbers = [TaskLiteral("number", m.group(), m.start(), m.end()) for m in _NUMBER.finditer(task)
               if all(m.end() <= a or m.start() >= b for a, b in taken)]
    return tuple(sorted(quoted + names + numbers, key=lambda lit: lit.start))


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())  # casefold: "Which" and "which" are the same question


def shape_key(task: str, literals: tuple[TaskLiteral, ...] | None = None) -> str:
    """The task with every literal replaced by ``<kind>``, case-folded, whitespace collapsed, trailing
    punctuation dropped: tasks that differ only in their literals share it."""
    literals = extract_literals(task) if literals is None else literals
    pieces, last = [], 0
    for lit in literals:
        pieces += [task[last:lit.start], f"<{lit.kind}>"]
        last = lit.end
    pieces.append(task[last:])
    return _TRAILING.sub("", _normal("".join(pieces)))


def parse_number(text: str, as_int: bool) -> int | float | None:
    """The JSON number a numeric literal stands for; None when an int is wanted and the text is not one."""
    plain = text.replace(",", "")
    if "." not in plain:
        value = int(plain)
        return value if as_int else float(value)
    number = float(plain)
    if as_int:
        return int(number) if number.is_integer() else None
    return number
