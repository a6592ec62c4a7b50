"""The figure each looked-up step found about what it looked up, and which of two such steps has the larger."""

from __future__ import annotations

from collections.abc import Sequence

from agents.checks.facts import Result, show
from agents.checks.numeric.figures import relevant_number, relevant_numbers

__all__ = ["looked_up_figures", "ranked", "shown"]


def looked_up_figures(results: Sequence[Result]) -> list[tuple[Result, float]]:
    """Each looked-up step's one figure about what it looked up (``agents.checks.numeric.figures.relevant_number``)."""
    return [(r, number) for r in results if not r.failed and r.tool_name is not None
            and not isinstance(r.output, (int, float))
            and (number := relevant_number(r.output, r.about or r.description)) is not None]


def ranked(results: Sequence[Result]) -> tuple[tuple[Result, tuple[float, ...]], tuple[Result, tuple[float, ...]]] | None:
    """The two looked-up things a comparison weighs, smaller first, each with its candidate figures
    (``relevant_numbers``): settled only when every candidate of one is below every candidate of the other.
    None when there are not exactly two, or they overlap."""
    figures = [(r, found) for r in results if not r.failed and r.tool_name is not None
               and not isinstance(r.output, (int, float))
               and (found := relevant_numbers(r.output, r.about or r.description))]
    if len(figures) != 2:
        return None
    (first, a), (second, b) = figures
    if max(a) < min(b):
        return (first, a), (second, b)
    if max(b) < min(a):
        return (second, b), (first, a)
    return None


def shown(candidates: tuple[float, ...]) -> str:
    """Candidates as shown, each once ("4,806", not "4,806 or 4,806" for 4,806 and 4,805.59)."""
    return " or ".join(dict.fromkeys(show(v) for v in candidates))
