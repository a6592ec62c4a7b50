"""Typed outputs on the generality suite: each task's ``output_type`` from the shape of its expected answer.

A task's ``Expect`` says what a right answer holds, and that is the shape its typed answer takes, whatever the
task or its language: a figure alone is a number (``int`` when the expected figure is a whole count, else
``float``; signed when the question asks for a signed change), one name ahead of rivals is a ``str``, several
names are a ``list[str]``, a name with its figure is a ``NamedFigure``. Nothing is keyed to a task.

``output_right`` grades a typed answer as ``scoring.answer_right`` grades text: names with case and accents
folded (a list as a set), figures within the task's tolerance.

    >>> from benchmarks.generality.model import Expect
    >>> shape_of(Expect(number=35, sign=-1)), expected_value(Expect(number=35, sign=-1))
    ('signed', -35.0)
    >>> expected_value(Expect(number=0.7, names=("Rome",), rivals=("Paris",)))
    NamedFigure(name='Rome', value=0.7)
    >>> output_right(Expect(names=("Ada", "Grace")), ["grace", "Ada"]), output_right(Expect(number=3), 4)
    (True, False)
"""

from __future__ import annotations

import unicodedata
from typing import Any, Literal, assert_never

from pydantic import BaseModel

from benchmarks.generality.model import Expect

__all__ = ["OUTPUT_TYPES", "AnswerShape", "NamedFigure", "expected_value", "output_right", "output_type",
           "shape_of"]


class NamedFigure(BaseModel):
    """A name and its figure: who leads and by how much, whose balance is what."""

    name: str
    value: float


AnswerShape = Literal["count", "number", "signed", "name", "names", "named_figure"]
OUTPUT_TYPES: dict[AnswerShape, Any] = {"count": int, "number": float, "signed": float, "name": str,
                                        "names": list[str], "named_figure": NamedFigure}
"""The output type of each answer shape (module-level types: another process imports them by path)."""


def shape_of(expect: Expect) -> AnswerShape:
    """The shape of the answer ``expect`` describes."""
    if expect.number is not None and expect.names:
        if len(expect.names) > 1:
            raise ValueError(f"no typed shape for a figure with several names {expect.names!r}")
        return "named_figure"
    if expect.number is not None:
        if expect.sign:
            return "signed"
        return "count" if isinstance(expect.number, int) else "number"
    if not expect.names:
        raise ValueError("an Expect with neither a figure nor a name has no answer to type")
    return "name" if len(expect.names) == 1 and expect.rivals else "names"


def output_type(expect: Expect) -> Any:
    """The ``output_type`` a task with ``expect`` is given."""
    return OUTPUT_TYPES[shape_of(expect)]


def _figure(expect: Expect) -> float:
    assert expect.number is not None
    return float(expect.sign or 1) * float(expect.number)


def expected_value(expect: Expect) -> Any:
    """The right answer as a value of ``output_type(expect)``."""
    shape = shape_of(expect)
    match shape:
        case "count":
            return int(expect.number)  # type: ignore[arg-type]
        case "number" | "signed":
            return _figure(expect)
        case "name":
            return expect.names[0]
        case "names":
            return list(expect.names)
        case "named_figure":
            return NamedFigure(name=expect.names[0], value=_figure(expect))
        case _:
            assert_never(shape)


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c)).strip()


def _close(expect: Expect, got: Any) -> bool:
    if isinstance(got, bool) or not isinstance(got, int | float):
        return False
    target = _figure(expect)
    slack = max(expect.tolerance * abs(target), 0.011)
    # Unsigned figures are magnitudes, as the text grader reads them ("fell by 35" and "-35" both state 35).
    return abs((got if expect.sign else abs(got)) - (target if expect.sign else abs(target))) <= slack


def output_right(expect: Expect, output: Any) -> bool:
    """Is ``output`` (a validated value of ``output_type(expect)``) the expected answer, within tolerance?"""
    if output is None:
        return False
    shape = shape_of(expect)
    match shape:
        case "count" | "number" | "signed":
            return _close(expect, output)
        case "name":
            return isinstance(output, str) and _fold(output) == _fold(expect.names[0])
        case "names":
            return isinstance(output, list) and sorted(map(_fold, map(str, output))) == sorted(map(_fold, expect.names))
        case "named_figure":
            return (isinstance(output, NamedFigure) and _fold(output.name) == _fold(expect.names[0])
                    and _close(expect, output.value))
        case _:
            assert_never(shape)
