"""A ratio or percentage the task asks for (``agents.checks.numeric.ratio.asked_ratio``) that the last computing
step got wrong, and how the reviewer is told.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.checks.facts import Result, is_passage, last_computed, show, subject
from agents.checks.numbers import numbers_in, rounded_to
from agents.checks.numeric.figures import relevant_numbers
from agents.checks.numeric.ratio import RatioFault, asked_ratio, ratio_values, side_of

__all__ = ["ratio_fault", "ratio_text"]


def ratio_fault(task: str, results: Sequence[Result]) -> RatioFault | None:
    """A ratio or percentage the task asks for (``agents.checks.numeric.ratio.asked_ratio``) that the last computing step got
    wrong: the division the wrong way round ("how many times larger is Rome than the United Kingdom" computed as
    ``max / min``), or a figure left out or typed in (Everest's height over 3,083, a number no result states).
    Silent unless each side of the ratio has a looked-up figure told apart by its name, and when the figure is the
    asked ratio of any number one side's passages state to any the other's (one the candidates left out). Any two
    numbers of the step's inputs would be too many: a plan divided a Tokyo passage's area, found by a
    search for "area of 505990", by Vienna's.

        >>> task = "What percentage of the height of Mount Fuji is the height of Mont Blanc?"
        >>> results = [Result(1, "doc_search", "height of Mount Fuji", [{"title": "Mount Fuji", "text": "Mount Fuji: "
        ...                   "Height: Mount Fuji rises to 3,776 m, the highest peak of Japan."}]),
        ...            Result(2, "doc_search", "height of Mont Blanc", [{"title": "Mont Blanc", "text": "Mont Blanc: "
        ...                   "Height: Mont Blanc rises to 4,806 m above sea level in the Alps."}]),
        ...            Result(3, "calculator", "percent", 78.57, depends_on=(1, 2))]
        >>> fault = ratio_fault(task, results)
        >>> fault.reversed, fault.numerator_steps, [round(v, 2) for v in fault.expected]
        (True, (2,), [127.28])
    """
    asked, last = asked_ratio(task), last_computed(results)
    if asked is None or last is None:
        return None
    sides: dict[str, list[tuple[Result, tuple[float, ...]]]] = {"numerator": [], "denominator": []}
    for r in results:
        if r.failed or r.tool_name is None or not is_passage(r.output):
            continue
        found = relevant_numbers(r.output, r.about or r.description)
        side = side_of(asked, subject(r))
        if found and side is not None:
            sides[side].append((r, found))
    top, bottom = sides["numerator"], sides["denominator"]
    if not top or not bottom:
        return None
    top_values = tuple(dict.fromkeys(v for _, found in top for v in found))
    bottom_values = tuple(dict.fromkeys(v for _, found in bottom for v in found))
    computed = float(last.output)
    expected = ratio_values(asked, top_values, bottom_values)
    if any(rounded_to(computed, e) for e in expected):
        return None
    reversed_ = any(rounded_to(computed, e) for e in ratio_values(asked, bottom_values, top_values))
    if not reversed_ and any(rounded_to(computed, e) for e in ratio_values(
            asked, [n for r, _ in top for n in numbers_in(r.output)], [n for r, _ in bottom for n in numbers_in(r.output)])):
        return None  # a figure each side's passage states that the candidates left out: not a misread
    return RatioFault(last.step_id, computed, asked, tuple(r.step_id for r, _ in top),
                      tuple(r.step_id for r, _ in bottom), subject(top[0][0]), subject(bottom[0][0]), expected,
                      reversed_)


def ratio_text(fault: RatioFault) -> str:
    times = " × 100" if fault.asked.percent else ""
    asked = f"{fault.numerator_name}'s figure over {fault.denominator_name}'s{times}"
    right = " or ".join(show(v) for v in fault.expected)
    if fault.reversed:
        return (f"The task asks for {asked}, but step {fault.step} computed {show(fault.computed)}, which is "
                f"{fault.denominator_name}'s over {fault.numerator_name}'s: the division is the wrong way round. "
                f"The asked figure is {right}.")
    return (f"The task asks for {asked}, but step {fault.step} computed {show(fault.computed)}, not that ratio of "
            f"the figures the results state ({right}): compute it from step {fault.numerator_steps[0]}'s and step "
            f"{fault.denominator_steps[0]}'s figures, with no number typed in.")
