"""A total the task asks for: computed short of the sum of its inputs, left to the reviewer, or left out of the
answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.checks.facts import Fact, Result, Severity, last_computed, show
from agents.checks.numbers import numbers_in, supported, written
from agents.checks.numeric.lookups import looked_up_figures
from agents.checks.numeric.wording import NOT_A_SUM, TOTAL

__all__ = ["TotalFault", "partial_total", "total_fault", "total_left_out", "uncomputed_total"]


@dataclass(frozen=True, slots=True)
class TotalFault:
    """Step ``step`` computed ``computed`` for a total, less than ``total``, the sum of its inputs' figures (the
    looked-up steps ``parts`` its inputs read, in the order it used them)."""

    step: int
    computed: float
    parts: tuple[int, ...]
    figures: tuple[float, ...]
    total: float


def total_fault(task: str, results: Sequence[Result]) -> TotalFault | None:
    """"What is the combined length of the Rhine and the Thames?" computed as ``max(1230, 346) - min(…)``: a total
    smaller than the sum of the figures it was computed from (each of them read from its own step, all positive)
    is not that total. An input that is a reasoning step answering the name of the one search it read ("Danube")
    stands for that search's figure, as the calculator reads it (``StepRequest.read_through``). Silent unless
    every input has its figure, and where the total is only a base ("what share of the total")."""
    last = last_computed(results)
    if not TOTAL.search(task) or NOT_A_SUM.search(task) or last is None or len(last.depends_on) < 2:
        return None
    figures = {r.step_id: n for r, n in looked_up_figures(results)}
    by_id = {r.step_id: r for r in results}
    looked_up = [dep if dep in figures else _read_through(by_id.get(dep), figures) for dep in last.depends_on]
    if any(step is None or figures[step] <= 0 for step in looked_up):
        return None
    parts = tuple(step for step in looked_up if step is not None)
    values = tuple(figures[step] for step in parts)
    if len(set(parts)) < len(parts) or last.output >= sum(values) * 0.99:
        return None
    return TotalFault(last.step_id, float(last.output), parts, values, sum(values))


def _read_through(step: Result | None, figures: dict[int, float]) -> int | None:
    """The looked-up step a reasoning step stands for: one that read one search with a figure and answered with
    no number of its own (the name the search found)."""
    if step is None or step.tool_name is not None or step.failed or len(step.depends_on) != 1 or \
            step.depends_on[0] not in figures or numbers_in(step.output):
        return None
    return step.depends_on[0]


def partial_total(task: str, results: Sequence[Result]) -> list[Fact]:
    if (fault := total_fault(task, results)) is None:
        return []
    shown = " + ".join(show(p) for p in fault.figures)
    return [Fact(Severity.CONTRADICTION, (
        f"The task asks for a total, but step {fault.step} computed {show(fault.computed)}, less than the sum of "
        f"the figures it used ({shown} = {show(fault.total)}): add them."))]


def uncomputed_total(task: str, last: Result | None, figures: Sequence[tuple[Result, float]]) -> \
        tuple[float, str] | None:
    """The sum a "total"/"combined" task asks for when the plan looked up two figures and computed nothing (the
    embedded planner often leaves the adding to the reviewer, which then added them, or listed both): the sum and
    how it is made. Two figures only: with more, one may be a hop's (the country searched to find its capital)."""
    if not TOTAL.search(task) or NOT_A_SUM.search(task) or last is not None or len(figures) != 2:
        return None
    parts = [number for _, number in figures]
    if any(p <= 0 for p in parts):
        return None
    return sum(parts), " + ".join(show(p) for p in parts)


def total_left_out(answer: str, results: Sequence[Result], task: str) -> list[Fact]:
    """A total the plan left to the reviewer, answered without it ("2.10 million in Paris and 2.75 million in
    Rome" for "the total population of Paris and Rome")."""
    total = uncomputed_total(task, last_computed(results), looked_up_figures(results))
    if total is None or any(supported(v, r, [total[0]]) for options in written(answer) for v, r in options):
        return []
    return [Fact(Severity.CONTRADICTION, (
        f"The task asks for a total, and the figures the steps found add up to {show(total[0])} ({total[1]}), but "
        "the answer does not state it: state the total, rounded as the task asks."))]
