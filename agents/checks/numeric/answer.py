"""Contradictions between a proposed answer and the results, as the opt-in numeric set reads them: a figure no
result supports, the smaller of two figures named as the larger, a computed difference, total or ratio the
answer leaves out. Each is a heuristic about look-up-and-compute questions in English (``docs/checks.md``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.checks.facts import Fact, Result, Severity, last_computed, show, subject
from agents.checks.injection import ordering
from agents.checks.numbers import numbers_in, states, supported, written
from agents.checks.numeric.lookups import ranked, shown
from agents.checks.numeric.ratio import asked_ratio
from agents.checks.numeric.ratio_check import ratio_fault
from agents.checks.numeric.results import check_results
from agents.checks.numeric.support import derived
from agents.checks.numeric.totals import total_fault, total_left_out
from agents.checks.numeric.wording import MAGNITUDE, NOT_A_SUM, TOTAL, WHICH

__all__ = ["answer_faults", "check_answer"]


def check_answer(answer: str | None, results: Sequence[Result], *, task: str = "") -> tuple[Fact, ...]:
    """Contradictions between a proposed answer and the results: a figure the answer states that no result
    (nor the task, nor a sum, difference, ratio or percentage of two of them) supports, a negative
    magnitude, the smaller of two figures named as the larger, and a difference the task asks for that the
    plan computed but the answer leaves out. Small whole numbers (< 10: counts, ranks, "2 cities") are not checked; a small decimal (a ratio,
    "3.77 times") is."""
    if not answer:
        return ()
    return (*(f for f in check_results(task, results) if f.severity is Severity.CONTRADICTION),
            *answer_faults(answer, results, task=task))


def answer_faults(answer: str | None, results: Sequence[Result], *, task: str = "") -> tuple[Fact, ...]:
    """The contradictions of ``check_answer`` that are the answer's own, not the results': what a second review
    of the same results can put right (the policy's ``ReviewAgain``).

        >>> r = Result(step_id=1, tool_name="calculator", description="difference", output=7440000)
        >>> [f.text[:40] for f in answer_faults("NYC has 744,000 more", [r], task="How many more?")]
        ['The answer states 744,000, which no step']
    """
    if not answer:
        return ()
    facts = wrong_winner(answer, results, task)
    facts += amount_left_out(answer, results, task)
    facts += total_left_out(answer, results, task)
    facts += computed_left_out(answer, results, task)
    # An output that gives orders is the attacker's text: the figures it dictates support nothing.
    injected = {r.step_id for r in ordering(results)}
    trusted = [r for r in results if not r.failed and r.step_id not in injected]
    # What a step was given (a write call's figures) and how many items a list holds (a count the reviewer made)
    # support a figure as much as what a step returned.
    known = [n for r in trusted for n in (*numbers_in(r.output), *numbers_in(r.inputs))] + numbers_in(task) + \
        [float(len(r.output)) for r in trusted if isinstance(r.output, list)]
    combined = derived(known)
    for options in written(answer):
        if all(abs(v) < 10 and float(v).is_integer() for v, _ in options) or any(
                supported(v, r, known) or supported(v, r, combined) for v, r in options):
            continue
        value = options[0][0]
        facts.append(Fact(Severity.CONTRADICTION, (
            f"The answer states {show(value)}, which no step result supports (nor a sum, difference, ratio or "
            "percentage of two results): use only figures from the results.")))
    return tuple(facts)


def wrong_winner(answer: str, results: Sequence[Result], task: str) -> list[Fact]:
    """"Which is longer, the Nile or the Rhine?" answered "The Rhine is longer" while the Nile's figure is the
    larger: the answer names the smaller first. Each of the two figures' steps is told apart by the words of
    what it looked up that the other's lack ("nile" / "rhine"); silent when that is unclear."""
    if not WHICH.search(task):
        return []
    two = ranked(results)
    if two is None:
        return []
    (small, low), (large, high) = two
    words = [set(re.findall(r"[a-z]+", subject(r).lower())) for r in (small, large)]
    own_small, own_large = words[0] - words[1], words[1] - words[0]
    text = answer.lower()
    first = {w: m.start() for w in own_small | own_large if (m := re.search(rf"\b{re.escape(w)}\b", text))}
    if not first or not own_small or not own_large:
        return []
    leader = min(first, key=first.__getitem__)
    if leader not in own_small:
        return []
    return [Fact(Severity.CONTRADICTION, (
        f"The answer names {leader!r} first, but step {large.step_id}'s figure ({shown(high)}) is larger than step "
        f"{small.step_id}'s ({shown(low)}): the larger is what step {large.step_id} looked up."))]


def computed_left_out(answer: str, results: Sequence[Result], task: str) -> list[Fact]:
    """A ratio or total task answered without the figure the plan computed right (``ratio_fault``, ``total_fault``
    found nothing): a plan computed 1,219.55 and the reviewer wrote "1.28 times", which a ratio of two
    unrelated numbers of the results happened to support; a "combined length" was answered with one river's.
    Silent when the task asks neither (``agents.checks.numeric.ratio.asked_ratio``, "total"/"combined"), when nothing was
    computed, or when the computed figure is itself wrong (the results' contradiction, not the answer's)."""
    last = last_computed(results)
    ratio = asked_ratio(task) is not None
    total = TOTAL.search(task) is not None and NOT_A_SUM.search(task) is None
    if last is None or not (ratio or total) or ratio_fault(task, results) is not None or \
            total_fault(task, results) is not None:
        return []
    computed = float(last.output)
    if states(answer, computed):
        return []
    return [Fact(Severity.CONTRADICTION, (
        f"The task asks for a {'ratio' if ratio else 'total'}, and step {last.step_id} computed {show(computed)} for "
        "it from the results, but the answer does not state that figure: state it, rounded as the task asks."))]


def amount_left_out(answer: str, results: Sequence[Result], task: str) -> list[Fact]:
    """"How many more …?" answered without the amount the plan computed for it: "Rome is larger", or a figure
    of its own beside the computed 8,467.86. Silent when the computed figure is negative (already a
    contradiction: the wrong way round) and on tasks that ask for no difference."""
    last = last_computed(results)
    if not MAGNITUDE.search(task) or last is None or last.output < 0:
        return []
    if states(answer, float(last.output)):
        return []
    return [Fact(Severity.CONTRADICTION, (
        f"The task asks for a difference (how many/much more, by how much), and step {last.step_id} computed "
        f"{show(last.output)} for it from the results, but the answer does not state that figure: state it, "
        "rounded as the task asks."))]
