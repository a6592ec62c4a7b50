"""One review as code checks it: the built-in sets' findings (``agents.checks.review``) and the user's answer
checks, folded into the policy's input before the verdict counts.

The task runner calls ``checked_review`` with the reviewer's verdict; an accept the built-in sets contradict or the
user's checks refuse is not an accept (``agents.checks.runner.with_findings``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agents.checks.api import AnswerReview, Check, CheckedReflection, CheckFinding, ReviewedStep
from agents.checks.review import review_context
from agents.checks.runner import builtin_findings, run_checks, with_findings
from agents.outputs import OutputInvalid, OutputSpec, validate_output
from agents.roles.messages import StepView
from planning.models import Plan, PlanStep, Reflection
from planning.policy import Decision, ReflectionContext, ReviewAgain

__all__ = ["answer_review", "checked_review", "recorded_with"]


def answer_review(task: str, answer: str | None, plan: Plan, views: Sequence[StepView],
                  arguments: Callable[[PlanStep], Any], output: OutputSpec | None = None) -> AnswerReview:
    """What a check sees of one review: the task, the proposed answer (and, with an ``output_type``, the answer
    as that type: the reviewer's call validated it already), each step's call and outcome."""
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
    value = None
    if output is not None and answer:
        try:
            value = validate_output(output, answer)
        except OutputInvalid:  # not an output the reviewer's call let through: nothing typed to show
            value = None
    return AnswerReview(task=task, answer=answer, output=value, steps=tuple(steps))


async def checked_review(reflection: Reflection, task: str, views: Sequence[StepView], plan: Plan, *,
                         builtin: Sequence[str], checks: Sequence[Check], arguments: Callable[[PlanStep], Any],
                         timeout_s: float, output: OutputSpec | None = None, **policy: Any) -> tuple[ReflectionContext, CheckedReflection, str | None]:
    """The policy's input for one review (``policy``: its counters and limits), the review as the task records it
    (with every finding), and the fault of a user's check that broke (then the task must fail, naming it). The
    user's checks run only on an accept: there is nothing else for them to refuse."""
    context = review_context(reflection, task, views, plan, checks=builtin, **policy)
    findings = builtin_findings(context)
    fault = None
    if checks and reflection.action == "accept":
        run = await run_checks(checks, answer_review(task, reflection.answer, plan, views, arguments, output),
                               timeout_s=timeout_s)
        fault = run.fault
        context = with_findings(context, run.findings)
        findings += run.findings
    return context, CheckedReflection(**reflection.model_dump(), checks=findings), fault


def recorded_with(recorded: CheckedReflection, decision: Decision) -> CheckedReflection:
    """The review as the task keeps it once the policy has decided: when code asked the reviewer once more about an
    answer it found nothing wrong with (``ReviewAgain(answer_fault=False)``: the final-figure hint, or a low score
    over the figure the plan computed), no refusal says so, yet that accept did not count; the request is recorded
    as an ``ask_again`` finding with the words the reviewer was shown. A second look over a wrong answer needs no
    entry: the refusals that caused it are there already."""
    if isinstance(decision, ReviewAgain) and not decision.answer_fault:
        asked = CheckFinding(check="builtin", source="builtin", kind="ask_again", message=decision.feedback)
        return recorded.model_copy(update={"checks": (*recorded.checks, asked)})
    return recorded
