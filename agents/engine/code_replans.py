"""Replans the task runner starts without a reviewer call: a tool that rejected a call's arguments (the planner is
told the tool's words), and, with the opt-in numeric check set only, plans code rewrites itself.

By default code never rewrites a user's plan: what a rewrite rests on (which figure a passage means, which
way a ratio goes by the task's English wording) is a heuristic (docs/checks.md). With ``"numeric"`` in
``RuntimeConfig.builtin_checks``, a ratio computed the wrong way round or from a figure no result states
(``agents.checks.numeric.ratio``), a total computed short of the sum of its inputs
(``agents.checks.numeric.totals``) and a name hop whose search the plan left out
(``agents.checks.numeric.hop_search``) are rewritten by code: a small planner told so in feedback often wrote the
same plan again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.checks.numeric.hop_search import add_hop_searches, describe, unsearched_hops
from agents.checks.numeric.ratio import describe as describe_ratio_fix
from agents.checks.numeric.ratio import rewrite_ratio
from agents.checks.numeric.ratio_check import ratio_fault
from agents.checks.numeric.rewrite import rewrite_expression, sum_expression
from agents.checks.numeric.totals import total_fault
from agents.checks.review import StepLike, evidence_of
from planning.models import Plan, PlanStep

__all__ = ["CodeReplan", "argument_replan", "arithmetic_replan", "replan_before_review"]


@dataclass(frozen=True, slots=True)
class CodeReplan:
    """A replan started by code: the feedback the replanned event carries, and the plan when code wrote it
    (None: the planner writes the next plan, told ``feedback``)."""

    feedback: str
    plan: Plan | None = None


def argument_replan(task: str, steps: Sequence[PlanStep], outputs: Mapping[int, Any],
                    rejected: Sequence[tuple[int, str | None]], number_slots: Callable[[PlanStep], frozenset[int]],
                    checks: Sequence[str]) -> CodeReplan:
    """The replan for calls whose arguments the tool still rejected after the repair round: the planner is told
    each tool's words; with the numeric set, a name hop's missing search is added by code instead."""
    if "numeric" in checks:
        plan = Plan(steps=list(steps))
        hops = unsearched_hops(steps, outputs, [sid for sid, _ in rejected], number_slots)
        fixed = add_hop_searches(plan, hops, task) if hops else None
        if fixed is not None:
            return CodeReplan(describe(hops, plan, fixed), fixed)
    return CodeReplan("The tools rejected these calls' arguments (each error says why): " + "; ".join(
        f"step {sid}: {error}" for sid, error in rejected) + ". Write those calls with valid arguments.")


def arithmetic_replan(task: str, plan: Plan, views: Sequence[StepLike], checks: Sequence[str]) -> CodeReplan | None:
    """The plan with its computing step rewritten, when the numeric set finds its ratio or total wrong; None by
    default, and when nothing is found or the step already computes the rewritten expression (once per
    expression: a rewritten step that still misses is the reviewer's)."""
    if "numeric" not in checks:
        return None
    results = evidence_of(views, plan)
    if (ratio := ratio_fault(task, results)) is not None and (fixed := rewrite_ratio(plan, ratio)) is not None:
        return CodeReplan(describe_ratio_fix(ratio), fixed)
    total = total_fault(task, results)
    if total is not None and (fixed := rewrite_expression(plan, total.step, sum_expression(total.parts),
                                                          total.parts)) is not None:
        return CodeReplan(f"Checked by code: the task asks for a total, but step {total.step} computed "
                          f"{total.computed:,.4g}, less than the sum of the figures it used. Code rewrote "
                          f"step {total.step} to add them.", fixed)
    return None


def replan_before_review(task: str, plan: Plan, records: Mapping[int, Any], outputs: Mapping[int, Any],
                         views: Callable[[Plan], Sequence[StepLike]], number_slots: Callable[[PlanStep], frozenset[int]],
                         checks: Sequence[str], *, argument_replans: int) -> tuple[CodeReplan, bool] | None:
    """The replan code starts before any review, and whether it is the argument replan (once a task): a call whose
    arguments the tool still rejected after the repair round goes back to the planner with the tool's words,
    without a reviewer call — a retry of the same call fails the same way (three identical retries cost one
    measured task 313 s before loop detection stopped it); with the numeric set, a ratio or a total computed wrong
    is rewritten. ``records``: each step's record (``status``, ``error_kind``, ``error``)."""
    rejected = [(sid, rec.error) for sid, rec in sorted(records.items())
                if rec.status == "failed" and rec.error_kind == "argument"]
    if rejected and argument_replans < 1:
        return argument_replan(task, list(plan.steps), outputs, rejected, number_slots, checks), True
    fixed = arithmetic_replan(task, plan, views(plan), checks)
    return None if fixed is None else (fixed, False)
