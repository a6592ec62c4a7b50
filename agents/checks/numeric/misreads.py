"""A figure read or typed wrong by a plan: a difference no two stated figures give, a figure typed from another
clause than the one naming what the step looked up, an expression mixing "in millions" with units.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from agents.checks.facts import Fact, Result, Severity, is_passage, show, subject, upstream
from agents.checks.numbers import numbers_in, stated_numbers, supported, written
from agents.checks.numeric.clauses import naming_clauses, split_clauses
from agents.checks.numeric.figures import top_passage
from agents.checks.numeric.lookups import ranked, shown
from agents.checks.numeric.wording import MAGNITUDE, NOT_A_SUM

__all__ = ["mixed_scales", "typed_from_other_clause", "wrong_difference"]


def wrong_difference(task: str, last: Result | None, results: Sequence[Result]) -> list[Fact]:
    """"How many more people live in the larger of Cairo and France?" computed as 3,160,000 from passages stating
    10 million and 68.4 million: the difference the plan computed from the two figures is none their figures
    give (each candidate of the larger minus each of the smaller). Silent unless the computing step used both
    looked-up steps (directly or through reasoning steps) and the task asks for a plain difference, not a share
    or a ratio."""
    if not MAGNITUDE.search(task) or NOT_A_SUM.search(task) or last is None or last.output < 0:
        return []
    two = ranked(results)
    if two is None:
        return []
    (small, low), (large, high) = two
    used = upstream(last, results)
    if not {small.step_id, large.step_id} <= used:
        return []
    differences = sorted({h - lo for h in high for lo in low})
    # Any two numbers the inputs state will do: the candidates leave years out, and "by how many years" is
    # computed from years ("opened in 1937" − "in 1889"). Only a difference no two stated numbers give is a misread.
    stated = [n for r in results if r.step_id in used and not r.failed for n in numbers_in(r.output)]
    if any(math.isclose(last.output, d, rel_tol=0.01) for d in differences) or any(
            math.isclose(last.output, abs(a - b), rel_tol=0.01) for a in stated for b in stated):
        return []
    return [Fact(Severity.CONTRADICTION, (
        f"Step {last.step_id} computed {show(last.output)}, but {subject(large)}'s figure ({shown(high)}) minus "
        f"{subject(small)}'s ({shown(low)}) is {' or '.join(show(d) for d in differences)}: a figure was misread. "
        "Compute the difference from the figures the results state."))]


def typed_from_other_clause(task: str, results: Sequence[Result]) -> list[Fact]:
    """"When was the Colosseum completed, and how many years before the Leaning Tower of Pisa was begun was
    that?" computed as ``1173 - 72``, from "construction began … around AD 72 and was completed … in AD 80": a
    figure typed into an expression that the passage it used states in another clause than the one naming what
    its step looked up (``agents.checks.numeric.clauses``). Silent unless exactly one figure is stated where the step's own
    words are, and the typed one is stated only elsewhere in that passage (its best hit); figures the task
    itself gives, and small ones (counts, factors), are not checked."""
    by_id = {r.step_id: r for r in results}
    given = numbers_in(task)
    facts: list[Fact] = []
    for step in results:
        if step.failed or step.tool_name is None or not step.arguments or \
                not isinstance(step.output, (int, float)) or isinstance(step.output, bool):
            continue
        typed = [v for v in stated_numbers(step.arguments) if abs(v) >= 10 and not supported(v, 0.0, given)]
        for source in (by_id[s] for s in sorted(upstream(step, results)) if s in by_id):
            if source.failed or source.tool_name is None or not is_passage(source.output):
                continue
            text, title = top_passage(source.output)
            stated = {clause: stated_numbers(clause) for clause in split_clauses(text or "")}
            naming = naming_clauses(text or "", about=source.about or source.description, title=title)
            meant = {v for clause in naming for v in stated[clause]}
            if len(meant) != 1:
                continue
            (figure,) = meant
            for value in typed:
                holding = [c for c, numbers in stated.items() if any(math.isclose(value, n) for n in numbers)]
                if holding and not set(holding) & set(naming) and not math.isclose(value, figure):
                    facts.append(Fact(Severity.CONTRADICTION, (
                        f"Step {step.step_id} typed {show(value)}, which step {source.step_id} ({subject(source)}) "
                        f"states for \"{holding[0]}\", not for what it looked up: \"{naming[0]}\" states "
                        f"{show(figure)}. Compute with {show(figure)}.")))
    return facts


# "2.1 * 1000000", "2.1e6", "10 ** 6": the expression converts a scale itself.
_CONVERTS = re.compile(r"\d[eE][+-]?\d|\*\*|\^|(?<![\d.,])1(?:000)+(?![\d.,])|(?<![\d.])1(?:,000)+(?![\d.])")


def mixed_scales(results: Sequence[Result]) -> list[Fact]:
    """"2.10 / 2750000": the expression a step typed takes one figure in millions ("2.10 million" as 2.10) and
    another in units ("2.75 million" as 2750000): the result is off by the scale (7.6e-7 for a ratio of 0.76).
    A typed figure counts as "in millions" only when no result writes that number unscaled."""
    facts = []
    for r in results:
        if r.failed or r.tool_name is None or not r.depends_on or not r.arguments or _CONVERTS.search(r.arguments):
            continue
        sources = [written(o.output) for o in results if o.step_id in r.depends_on and not o.failed]
        readings = [reading for found in sources for options in found for reading in options]
        scaled_down, whole = [], []
        for (typed, _), *_ in written(r.arguments):
            full = [v for v, _ in readings if math.isclose(v, typed, rel_tol=1e-9)]
            mantissas = [options for found in sources for options in found
                         if len(options) == 2 and math.isclose(options[1][0], typed, rel_tol=1e-9)]
            if mantissas and len(full) == len(mantissas):  # every match of it is the bare number of a scaled one
                scaled_down.append((typed, mantissas[0][0][0]))
            elif full and abs(typed) >= 1000:
                whole.append(typed)
        if scaled_down and whole:
            typed, meant = scaled_down[0]
            facts.append(Fact(Severity.CONTRADICTION, (
                f"Step {r.step_id}'s expression mixes scales: it uses {show(typed)} for {show(meant)} (a figure "
                f"written in millions or thousands) beside {show(whole[0])} in units, so its result is off by that "
                f"scale. Write every figure in the same unit ({show(meant)}).")))
    return facts
