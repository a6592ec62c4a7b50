"""Facts the opt-in numeric set finds in a task's results before the reviewer decides: the figure each look-up
found, which of two is larger, a difference computed the wrong way round, a total or a ratio computed wrong, a
figure misread. Written for look-up-and-compute questions in English over passages; ``docs/checks.md`` says
which are contradictions and why none of them is in the default set.

    >>> task = "How many more people live in the larger of Paris and Rome?"
    >>> wrong_way = [Result(3, "calculator", "difference", -650000.0)]
    >>> [f.severity.value for f in check_results(task, wrong_way)]
    ['contradiction']
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.checks.coverage import missing_names, unfound_names
from agents.checks.facts import Fact, Result, Severity, is_passage, last_computed, show, subject, text_of
from agents.checks.injection import injection_notes
from agents.checks.numeric.lookups import looked_up_figures, ranked, shown
from agents.checks.numeric.misreads import mixed_scales, typed_from_other_clause, wrong_difference
from agents.checks.numeric.ratio_check import ratio_fault, ratio_text
from agents.checks.numeric.totals import partial_total, uncomputed_total
from agents.checks.numeric.wording import MAGNITUDE, SIGNED, WHICH
from agents.checks.sound import equation_notes, failed_note, unstated_figures_note

__all__ = ["check_results"]


def check_results(task: str, results: Sequence[Result]) -> tuple[Fact, ...]:
    """Facts from the task and the step results alone (shown to the reviewer before it decides)."""
    facts = _negative_magnitude(task, results)
    figures = looked_up_figures(results)
    facts += _comparison(task, results, figures)
    last = last_computed(results)
    facts += partial_total(task, results)
    if (total := uncomputed_total(task, last, figures)) is not None:
        # Worded as the answer's figure, not as a gap in the plan: "no step computed one" made a small reviewer
        # replan a plan whose results were complete, where it had added them itself before.
        steps = " and ".join(str(r.step_id) for r, _ in figures)
        facts.append(Fact(Severity.NOTE, f"The total of steps {steps} is {show(total[0])} ({total[1]})."))
    facts += wrong_difference(task, last, results)
    misread = typed_from_other_clause(task, results)
    facts += misread
    if (fault := ratio_fault(task, results)) is not None:
        facts.append(Fact(Severity.CONTRADICTION, ratio_text(fault)))
    facts += mixed_scales(results)
    facts += _names(task, results)
    facts += injection_notes(results)
    if last is not None and not misread:  # "state that figure" beside "it used the wrong figure" says both ways
        facts.append(Fact(Severity.NOTE, f"Step {last.step_id} computed {show(last.output)} from the results "
                                         "before it: state that figure (rounded as the task asks)."))
    facts += failed_note(results)
    facts += unstated_figures_note(task, results)
    facts += equation_notes(results)
    return tuple(facts)


def _negative_magnitude(task: str, results: Sequence[Result]) -> list[Fact]:
    """"How many more …" computed as a negative number by the last step that computed one. Silent where the task
    asks for a change (a fall is rightly negative)."""
    if not MAGNITUDE.search(task) or SIGNED.search(task):
        return []
    computed = [r for r in results if not r.failed and r.tool_name is not None
                and isinstance(r.output, (int, float)) and not isinstance(r.output, bool)]
    last = computed[-1] if computed else None
    if last is None or last.output >= 0:
        return []
    return [Fact(Severity.CONTRADICTION, (
        f"The task asks for a difference as a size (how many/much more, by how much), but step "
        f"{last.step_id} computed {show(last.output)}, a negative number: the subtraction is the wrong way "
        "round. Compute the larger value minus the smaller one."))]


def _comparison(task: str, results: Sequence[Result], figures: list[tuple[Result, float]]) -> list[Fact]:
    """Which of two looked-up figures is the larger, when the task compares; else each step's figure."""
    magnitude, which = MAGNITUDE.search(task) is not None, WHICH.search(task) is not None
    compared = len(figures) == 2 and figures[0][1] != figures[1][1] and (magnitude or which)
    if compared:
        # Only where the task compares or asks for a difference: on "how many times larger" a stated difference
        # was copied into the answer as the ratio (measured: "3.771 times" for 5,343 / 1,572). It names both
        # steps' figures, so each step's own "states" line would only say them again (~35 prompt tokens).
        (small, a), (large, b) = sorted(figures, key=lambda f: f[1])
        difference = f"; the difference is {show(b - a)}" if magnitude else ""
        return [Fact(Severity.NOTE, f"The larger is {subject(large)} (step {large.step_id}): {show(b)} > "
                                    f"{show(a)} ({subject(small)}, step {small.step_id}){difference}.")]
    facts = [Fact(Severity.NOTE, f"Step {r.step_id} ({subject(r)}) states {show(number)}.") for r, number in figures]
    if which and (two := ranked(results)) is not None:
        # A passage that states two candidates ("metropolitan France … 551,695 km²; with overseas regions …
        # 632,700 km²") has no one figure, but the comparison is settled when both are on the same side.
        (small, low), (large, high) = two
        facts.append(Fact(Severity.NOTE, f"The larger is {subject(large)} (step {large.step_id}): "
                                         f"{shown(high)} > {shown(low)} ({subject(small)}, step {small.step_id})."))
    return facts


def _names(task: str, results: Sequence[Result]) -> list[Fact]:
    """Names the task lists that no step looked up, and names a step looked up that no passage mentions."""
    looked_at = [text for r in results for text in (r.about, r.description, r.arguments,
                                                    "" if r.failed else text_of(r.output))]
    facts = [Fact(Severity.CONTRADICTION, (
        f"The task names {name}, but no step looked it up and no result mentions it: add a step for {name}."))
        for name in missing_names(task, looked_at)]
    # Only passages can mention a name: a lookup that answers 3.96 or "Quenkancas" (the capital asked for) found
    # what it was asked for without naming it.
    tools = [r for r in results if not r.failed and r.tool_name is not None and is_passage(r.output)]
    facts += [Fact(Severity.CONTRADICTION, (
        f"A step looked up {name}, but no result mentions {name}: the tools found something else. Do not answer "
        f"from another thing's figures: search for {name} differently, or escalate saying the sources lack it."))
        for name in unfound_names(task, [r.arguments for r in tools], [text_of(r.output) for r in tools])]
    return facts
