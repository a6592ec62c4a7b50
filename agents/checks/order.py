"""The order of what look-ups of one tool returned, read by code and shown to the reviewer as a note.

Small models compare "5,48 M€" with "910 k€", or 2024-10-15 with 2024-11-01, by their digits. Code reads each
value once, with the one number reader (``agents.checks.numbers``), and states the order; the reviewer still
decides what the task asks. The note is an observation, never a veto, and it is said only where the reading is
unambiguous. Its preconditions:

- two to six completed steps called the same tool on their own (no step's output fed them) with different
  arguments, so their values measure the same thing of different entities;
- each output states exactly one value of the kind compared, in this order of preference: an ISO date or
  timestamp (``2024-12-06``, ``2025-03-04T10:12:00Z``); the same numeric fields of one record (``{"open_orders":
  14}``, one-row SQL results; fields named as ids are skipped); one figure — years, dates, versions and ids are not
  figures, nor a number the call was given (``week=11`` echoed as "week 11"); an output with several figures (a
  test run's counts and its duration) is not ordered; else a year, when each output states one
  ("founded on September 4, 1998");
- a figure two conventions read differently ("1.971", "4,806") is not ordered.

    >>> from agents.checks.facts import Result
    >>> rows = [Result(1, "revenue", "", "Acme in Q3 2025: 5,48 M€", arguments="Acme Q3"),
    ...         Result(2, "revenue", "", "Borealis in Q3 2025: 910 k€", arguments="Borealis Q3")]
    >>> print(order_notes(rows)[0].text)
    Read by code from the revenue results: #1 (Acme Q3) states 5,480,000, #2 (Borealis Q3) states 910,000; #1 (Acme Q3) is larger than #2 (Borealis Q3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from agents.checks.facts import Fact, Result, Severity
from agents.checks.numbers import Number, is_id_field, read_numbers
from dag.refs import maybe_json

__all__ = ["order_notes", "size_notes"]

_MAX_STEPS = 6
_MAX_FIELDS = 3
_ISO = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?"
                  r"(?![\d-])")
_SCALES = (1e3, 1e6, 1e9, 1e12)


def order_notes(results: Sequence[Result]) -> list[Fact]:
    """One note per group of same-tool look-ups whose values code can read and order (module docstring)."""
    notes = []
    for tool, steps in _lookups(results).items():
        distinct = len({repr(sorted(r.inputs.items())) if isinstance(r.inputs, dict) else r.arguments
                        for r in steps}) == len(steps)
        if 2 <= len(steps) <= _MAX_STEPS and distinct:
            text = _dates(tool, steps) or _fields(tool, steps) or _lengths(tool, steps) or _figures(tool, steps) \
                or _years(tool, steps)
            if text:
                notes.append(Fact(Severity.NOTE, text))
    return notes


def _lookups(results: Sequence[Result]) -> dict[str, list[Result]]:
    """The completed steps that called each tool on their own (no step's output fed them), by tool."""
    groups: dict[str, list[Result]] = {}
    for r in results:
        if not r.failed and r.tool_name and not r.depends_on and r.output is not None:
            groups.setdefault(r.tool_name, []).append(r)
    return groups


def _shown(value: float) -> str:
    return f"{value:,.12g}"


def _label(r: Result) -> str:
    named = r.arguments.strip() or r.description.strip()
    return f"#{r.step_id} ({named})" if named else f"#{r.step_id}"


def _sentence(what: str, steps: Sequence[Result], values: Sequence[Any], shown: Sequence[str],
              more: str, most: str, verb: str = "states") -> str:
    stated = ", ".join(f"{_label(r)} {verb} {s}" for r, s in zip(steps, shown))
    ranked = sorted(zip(values, steps), key=lambda p: p[0], reverse=True)
    if len({v for v, _ in ranked}) == 1:
        order = "they are all equal" if len(steps) > 2 else "they are equal"
    elif len(steps) == 2:
        (_, first), (_, second) = ranked
        order = f"{_label(first)} is {more} than {_label(second)}"
    else:
        order = f"from the {most}: " + ", ".join(_label(r) for _, r in ranked)
    return f"Read by code from the {what}: {stated}; {order}."


def _dates(tool: str, steps: Sequence[Result]) -> str | None:
    found = [_one_date(r.output) for r in steps]
    if any(f is None for f in found):
        return None
    values = [f[0] for f in found if f is not None]
    return _sentence(f"{tool} results", steps, values, [f[1] for f in found if f is not None], "later", "latest")


def _one_date(output: Any) -> tuple[datetime, str] | None:
    if not isinstance(output, str):
        return None
    matches = _ISO.findall(output)
    if len(matches) != 1:
        return None
    day, clock, zone = matches[0]
    written = day + (f"T{clock}{zone}" if clock else "")
    try:
        when = datetime.fromisoformat(written.replace("Z", "+00:00"))
    except ValueError:
        return None
    # A timestamp with a zone is compared in UTC; one without is taken as written (the tool's own clock).
    when = when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when
    return when, written


def _record(output: Any) -> dict[str, Any] | None:
    if isinstance(output, list) and len(output) == 1:
        output = output[0]
    return output if isinstance(output, dict) else None


def _fields(tool: str, steps: Sequence[Result]) -> str | None:
    records = [_record(r.output) for r in steps]
    if any(rec is None for rec in records):
        return None
    rows = [rec for rec in records if rec is not None]
    shared = [k for k in rows[0] if not is_id_field(k)
              and all(isinstance(row.get(k), (int, float)) and not isinstance(row.get(k), bool) for row in rows)]
    if not shared:
        return None
    sentences = [_sentence(f"{tool} results' field {key!r}", steps, [row[key] for row in rows],
                           [_shown(row[key]) for row in rows], "larger", "largest")
                 for key in shared[:_MAX_FIELDS]]
    return " ".join(sentences)


def _items(output: Any) -> list[Any] | None:
    """The list an output is: a list, or JSON text of one (tools often return rows as text)."""
    output = maybe_json(output)
    return output if isinstance(output, list) else None


def _lengths(tool: str, steps: Sequence[Result]) -> str | None:
    lists = [_items(r.output) for r in steps]
    if any(items is None for items in lists):
        return None
    sizes = [len(items) for items in lists if items is not None]
    return _sentence(f"{tool} results", steps, sizes, [_count(n) for n in sizes], "longer", "longest", verb="lists")


def _count(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def size_notes(results: Sequence[Result]) -> list[Fact]:
    """How many items a step's list holds (a list, or JSON text of one), counted by code: small models count
    the names or rows of a list they read wrong. Said for each completed step with a list of two or more items,
    unless two or more steps called its tool on their own (the order note compares those).

        >>> print(size_notes([Result(1, "team", "", '["Ana", "Luis", "Eva"]', arguments="pagos")])[0].text)
        Counted by code: #1 (pagos) lists 3 items.
    """
    compared = {r.step_id for steps in _lookups(results).values() if len(steps) >= 2 for r in steps}
    counted = [(r, len(items)) for r in results if not r.failed and r.step_id not in compared
               and (items := _items(r.output)) is not None and len(items) >= 2]
    if not counted:
        return []
    return [Fact(Severity.NOTE, "Counted by code: " + ", ".join(f"{_label(r)} lists {_count(n)}" for r, n in counted)
                 + ".")]


def _figures(tool: str, steps: Sequence[Result]) -> str | None:
    found = [_one_figure(r) for r in steps]
    if any(f is None for f in found):
        return None
    values = [f for f in found if f is not None]
    return _sentence(f"{tool} results", steps, values, [_shown(v) for v in values], "larger", "largest")


def _one_figure(r: Result) -> float | None:
    given = _given_numbers(r.inputs)
    text = r.output if isinstance(r.output, str) else ""
    figures = [n for n in read_numbers(r.output) if n.kind == "figure" and n.value not in given]
    if len(figures) != 1 or not _unambiguous(figures[0], text):
        return None
    return figures[0].value


def _unambiguous(n: Number, text: str) -> bool:
    """One reading, or a scaled number's bare mantissa beside it ("2.81M" is also "2.81"), not two conventions'
    readings of the same digits ("4,806" is 4806 or 4.806)."""
    if not n.others:
        return True
    scaled = bool(re.search(r"[^\W\d_]", text[n.start:n.end])) if n.start >= 0 else False
    return scaled and all(any(abs(n.value - v * s) <= 1e-9 * abs(n.value) for s in _SCALES) for v, _ in n.others)


def _given_numbers(inputs: Any) -> set[float]:
    if not isinstance(inputs, dict):
        return set()
    return {n.value for value in inputs.values() for n in read_numbers(value)}


def _years(tool: str, steps: Sequence[Result]) -> str | None:
    found = []
    for r in steps:
        numbers = read_numbers(r.output)
        years = [n.value for n in numbers if n.kind == "year"]
        if len(years) != 1 or any(n.kind == "figure" for n in numbers):
            return None
        found.append(years[0])
    return _sentence(f"{tool} results", steps, found, [f"the year {int(y)}" for y in found], "later", "latest")
