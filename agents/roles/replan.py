"""What a replanning planner is told, and which of the previous plan's steps a delta replan keeps.

Two forms, matching the planner prompt's reply form:

- JSON (planner/v10): the whole previous plan and verbose results; the model writes a complete new plan and
  keeps a completed step by repeating it unchanged (same id, tool, input and dependencies).
- terse (planner/v14): a **delta replan**. Completed steps keep their numbers and outputs; the model writes
  only the steps that change or are new, numbered after the highest old id, and refers to kept outputs as
  ``$N``.
  The planner role emits the kept steps itself (no tokens), so the wire plan is still complete.

    >>> from planning.models import Plan, PlanStep
    >>> from agents.roles.messages import ReplanContext, StepView
    >>> old = Plan(steps=[PlanStep(step_id=1, description="a", tool_name="t", tool_input={"x": 1}),
    ...                   PlanStep(step_id=2, description="b", tool_name="t", tool_input={"x": 2})])
    >>> views = (StepView(1, "a", "t", "completed", 5), StepView(2, "b", "t", "failed", None, "boom"))
    >>> ctx = ReplanContext("step 2 failed", old, views, kept=(1,))
    >>> [s.step_id for s in kept_steps(ctx)], next_step_id(ctx)
    ([1], 3)
"""

from __future__ import annotations

from agents.roles.messages import ReplanContext
from agents.roles.render import render_plan, render_results
from planning.models import PlanStep
from planning.terse import TerseEncodingError, render_terse
from prompts.compact import render_results_compact

__all__ = ["kept_steps", "next_step_id", "replan_context"]


def kept_steps(replan: ReplanContext) -> list[PlanStep]:
    """The previous plan's kept steps, in plan order (dependencies before dependents)."""
    kept = set(replan.kept)
    return [s for s in replan.previous_plan.steps if s.step_id in kept]


def next_step_id(replan: ReplanContext) -> int:
    """New steps are numbered from here: above every old id, so an old step's ``$N`` never changes meaning."""
    return max((s.step_id for s in replan.previous_plan.steps), default=0) + 1


def replan_context(replan: ReplanContext, *, terse: bool) -> str:
    if not terse:
        return (f"Your previous plan:\n{render_plan(replan.previous_plan)}\n\n"
                f"Results so far:\n{render_results(replan.results)}\n\nFeedback: {replan.feedback}\n"
                "Write a new, complete plan. To reuse a completed step without running it again, repeat it "
                "unchanged (same step_id, tool_name, tool_input and depends_on).")
    try:
        plan = render_terse(replan.previous_plan)
    except TerseEncodingError:
        plan = render_plan(replan.previous_plan)
    kept = sorted(replan.kept)
    start = next_step_id(replan)
    if kept:
        ids = ", ".join(f"${i}" for i in kept)
        keep = (f"The outputs of steps {ids} are kept: use them as $N without writing those steps again. "
                f"Write only the new or changed steps, numbered from {start}.")
    else:
        keep = f"No output is kept. Write the whole new plan, numbered from {start}."
    return (f"The previous plan:\n{plan}\n\nIts results:\n{render_results_compact(replan.results)}\n\n"
            f"Feedback: {replan.feedback}\n{keep}")
