"""The user's answer checks inside a task: the review they see, and what their verdict does to the policy's input.

The task runner calls ``apply_checks`` after code's built-in checks and before the policy decides, so an accept
the user's checks refuse is not an accept (``agents.checks.runner.with_findings``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agents.checks.api import AnswerReview, Check, CheckedReflection, CheckFinding, ReviewedStep
from agents.checks.runner import builtin_findings, run_checks, with_findings
from agents.roles.messages import StepView
from planning.models import Plan, PlanStep, Reflection
from planning.policy import ReflectionContext

__all__ = ["CheckFault", "answer_review", "apply_checks"]


class CheckFault(Exception):
    """A user's check broke (raised something other than ``Reject``, or ran past its limit): the task fails
    with this message. Internal to the engine; the user sees it as ``result.error``."""


def answer_review(task: str, answer: str | None, plan: Plan, views: Sequence[StepView],
                  arguments: Callable[[PlanStep], Any]) -> AnswerReview:
    """What a check sees of one review: the task, the proposed answer, each step's call and outcome."""
    by_id = {v.step_id: v for v in views}
    steps = []
    for s in plan.steps:
        v = by_id.get(s.step_id)
        args = arguments(s)
        steps.append(ReviewedStep(
            step_id=s.step_id, description=s.description, tool_name=s.tool_name,
            arguments=args if isinstance(args, dict) else dict(s.tool_input),
            status=v.status if v is not None else "pending",
            output=v.output if v is not None and v.status == "completed" else None,
            error=v.error if v is not None else None))
    return AnswerReview(task=task, answer=answer, steps=tuple(steps))


async def apply_checks(checks: Sequence[Check], reflection: Reflection, context: ReflectionContext,
                       review: Callable[[], AnswerReview], *,
                       timeout_s: float) -> tuple[ReflectionContext, CheckedReflection]:
    """The policy's input with the user's refusals added, and the review as the task records it (with every
    check's finding). The user's checks run only on an accept: there is nothing else for them to refuse.
    Raises ``CheckFault`` when a check breaks."""
    findings: tuple[CheckFinding, ...] = builtin_findings(context)
    if checks and reflection.action == "accept":
        run = await run_checks(checks, review(), timeout_s=timeout_s)
        if run.fault is not None:
            raise CheckFault(run.fault)
        context = with_findings(context, run.findings)
        findings += run.findings
    return context, CheckedReflection(**reflection.model_dump(), checks=findings)
