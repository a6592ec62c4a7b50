"""The ratio a task asks for — which figure goes on top — and the plan rewritten to compute it.

"How many times larger is the area of Rome than that of the United Kingdom?" asks Rome's area over the United
Kingdom's, small as it is; "What percentage of the height of Mount Everest is the height of the Empire State
Building?" asks the building's height over the mountain's, times 100. The embedded planner writes
``max($1, $2) / min($1, $2)`` for the first (right only when the first thing named is the larger) and divided
Everest by the building for the second (1,997 % where 4.3 % was asked). Which figure is the
numerator is settled by the task's words alone, so code reads it here, ``ratio_check.ratio_fault`` checks
the computed figure against it, and ``rewrite_ratio`` gives the computing step the expression the task asks for.

    >>> asked_ratio("How many times larger is the area of Istanbul than that of London? Give two decimals.")
    AskedRatio(numerator='the area of Istanbul', denominator='that of London', percent=False)
    >>> asked_ratio("What percentage of the height of Mount Fuji is the height of Mont Blanc?")
    AskedRatio(numerator='the height of Mont Blanc', denominator='the height of Mount Fuji', percent=True)
    >>> asked_ratio("How many times smaller is the area of Rome than that of London?")
    AskedRatio(numerator='that of London', denominator='the area of Rome', percent=False)
    >>> asked_ratio("How many more people live in Rome than in Paris?") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.checks.numeric.rewrite import rewrite_expression
from planning.models import Plan
from planning.words import STOP_WORDS

__all__ = ["AskedRatio", "RatioFault", "asked_ratio", "describe", "ratio_expression", "ratio_values", "rewrite_ratio", "side_of"]

_END = r"(?=[?.!;]|,\s|\s+(?:give|round|answer|to \w+ decimal)\b|$)"
# Each pattern names the numerator ``a`` and the denominator ``b``; ``p`` marks a percentage.
_PATTERNS = (
    # "How many times larger/bigger/longer/taller… is A than B"
    re.compile(r"\bhow many times (?:[a-z]+ )?(?P<adj>[a-z]+er|more \w+|less \w+) (?:is|are|was|were) (?P<a>.+?) "
               r"than (?P<b>.+?)" + _END, re.IGNORECASE),
    # "What percentage / percent / fraction / share / proportion of B is A"
    re.compile(r"\bwhat (?:(?P<p>percentage|percent)|fraction|share|proportion) of (?P<b>.+?) (?:is|are|was|were|"
               r"does|do) (?P<a>.+?)" + _END, re.IGNORECASE),
    # "A as a percentage / fraction of B", "A is what percent of B"
    re.compile(r"(?:\b(?:express|give|compute|calculate|what is)\s+|^)(?P<a>.+?)\s+(?:as a|is what) "
               r"(?:(?P<p>percentage|percent)|fraction|share|proportion) of (?P<b>.+?)" + _END, re.IGNORECASE),
    # "the ratio of A to B"
    re.compile(r"\bthe ratio of (?P<a>.+?) to (?P<b>.+?)" + _END, re.IGNORECASE),
)
# "How many times smaller is A than B" asks B over A: the smaller one goes below.
_DECREASING = re.compile(r"^(?:smaller|shorter|lower|fewer|lighter|younger|cheaper|thinner|narrower|slower|weaker|"
                         r"less \w+)$", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+")
_FILLER = STOP_WORDS | frozenset(["those", "city", "area", "height", "length", "population", "people"])
"""Words of a looked-up thing's name that tell no side of a ratio apart: the stop words, and the quantities."""


@dataclass(frozen=True, slots=True)
class AskedRatio:
    """The task's words for the figure on top and the one below; ``percent``: times 100."""

    numerator: str
    denominator: str
    percent: bool


@dataclass(frozen=True, slots=True)
class RatioFault:
    """Step ``step`` computed ``computed`` where the task asks ``asked``: the looked-up steps of each side (their
    ids), what each is about, and what the asked ratio of their figures is (one value per pair of candidates)."""

    step: int
    computed: float
    asked: AskedRatio
    numerator_steps: tuple[int, ...]
    denominator_steps: tuple[int, ...]
    numerator_name: str
    denominator_name: str
    expected: tuple[float, ...]
    reversed: bool
    """The computed figure is the other side's over this one's: the division the wrong way round."""


def asked_ratio(task: str) -> AskedRatio | None:
    """What the task divides by what, from its wording; None when it asks no ratio (or says it in a way not read
    here: silence is the safe side, the reviewer still judges)."""
    for pattern in _PATTERNS:
        if (m := pattern.search(task)) is not None:
            a, b = m.group("a").strip(" ,"), m.group("b").strip(" ,")
            if _DECREASING.match(m.groupdict().get("adj") or ""):
                a, b = b, a
            if a and b:
                return AskedRatio(a, b, bool(m.groupdict().get("p")))
    return None


def side_of(asked: AskedRatio, subject: str) -> str | None:
    """"numerator" or "denominator": which side of the ratio a looked-up thing is, by the words of its name only
    one side's phrase has ("Mount Everest" in "the height of Mount Everest"); None when both or neither do."""
    words = {w.lower() for w in _WORD.findall(subject)} - _FILLER
    top = {w.lower() for w in _WORD.findall(asked.numerator)}
    bottom = {w.lower() for w in _WORD.findall(asked.denominator)}
    in_top, in_bottom = bool(words & top - bottom), bool(words & bottom - top)
    if in_top == in_bottom:
        return None
    return "numerator" if in_top else "denominator"


def ratio_values(asked: AskedRatio, top: Sequence[float], bottom: Sequence[float]) -> tuple[float, ...]:
    """The asked ratio for each pair of candidate figures (a passage may state two: "381 m to the roof, 443 m
    with the antenna")."""
    scale = 100.0 if asked.percent else 1.0
    return tuple(dict.fromkeys(a / b * scale for a in top for b in bottom if b != 0))


def ratio_expression(asked: AskedRatio, numerator_step: int, denominator_step: int) -> str:
    """The calculator expression for the asked ratio of two steps' figures.

    >>> ratio_expression(AskedRatio("A", "B", percent=True), 2, 1)
    '{$step_2_result} / {$step_1_result} * 100'
    """
    expression = f"{{$step_{numerator_step}_result}} / {{$step_{denominator_step}_result}}"
    return f"{expression} * 100" if asked.percent else expression


def rewrite_ratio(plan: Plan, fault: RatioFault) -> Plan | None:
    """``plan`` with the computing step's expression replaced by the asked ratio of the first looked-up step of
    each side (the calculator reads a passage's figure itself, ``agents.checks.numeric.figures``), depending on those two.
    None when the step is no calculator with an ``expression`` or the plan already computes that expression.

    >>> from planning.models import PlanStep
    >>> plan = Plan(steps=[PlanStep(step_id=1, tool_name="doc_search", tool_input={"query": "area of Rome"}),
    ...                    PlanStep(step_id=2, tool_name="doc_search", tool_input={"query": "area of the UK"}),
    ...                    PlanStep(step_id=3, tool_name="calculator", depends_on=[1, 2],
    ...                             tool_input={"expression": "max({$step_1_result}, {$step_2_result}) / "
    ...                                                       "min({$step_1_result}, {$step_2_result})"})])
    >>> fault = RatioFault(3, 189.6, AskedRatio("the area of Rome", "that of the UK", False), (1,), (2,), "Rome",
    ...                    "United Kingdom", (0.0053,), True)
    >>> rewrite_ratio(plan, fault).step(3).tool_input
    {'expression': '{$step_1_result} / {$step_2_result}'}
    """
    if not fault.numerator_steps or not fault.denominator_steps:
        return None
    top, bottom = fault.numerator_steps[0], fault.denominator_steps[0]
    return rewrite_expression(plan, fault.step, ratio_expression(fault.asked, top, bottom), (top, bottom))


def describe(fault: RatioFault) -> str:
    """What code found and changed, for the replanned event."""
    times = " × 100" if fault.asked.percent else ""
    way = ("the division was the wrong way round" if fault.reversed else
           "that is not the ratio of the figures the results state")
    return (f"Checked by code: the task asks for {fault.numerator_name}'s figure over {fault.denominator_name}'s"
            f"{times}, but step {fault.step} computed {fault.computed:,.4g}: {way}. Code rewrote step {fault.step} "
            f"to divide step {fault.numerator_steps[0]}'s figure by step {fault.denominator_steps[0]}'s{times}.")

