"""A computing step given the expression the task asks for, when code can tell it (``agents.checks.numeric.ratio``, a total
``agents.checks.numeric.totals.total_fault`` found short): the rest of the plan stays as the planner wrote it.

    >>> from planning.models import Plan, PlanStep
    >>> plan = Plan(steps=[PlanStep(step_id=1, tool_name="doc_search", tool_input={"query": "length of the Rhine"}),
    ...                    PlanStep(step_id=2, tool_name="doc_search", tool_input={"query": "length of the Thames"}),
    ...                    PlanStep(step_id=3, tool_name="calculator", depends_on=[1, 2], description="calculator "
    ...                             "expression=max({$step_1_result}, {$step_2_result}) - min({$step_1_result}, "
    ...                             "{$step_2_result})", tool_input={
    ...                             "expression": "max({$step_1_result}, {$step_2_result}) - min({$step_1_result}, "
    ...                                           "{$step_2_result})"})])
    >>> fixed = rewrite_expression(plan, 3, sum_expression([1, 2]), [1, 2]).step(3)
    >>> fixed.tool_input, fixed.description
    ({'expression': '{$step_1_result} + {$step_2_result}'}, 'calculator expression={$step_1_result} + {$step_2_result}')
"""

from __future__ import annotations

from collections.abc import Sequence

from planning.models import Plan
from planning.terse_line import describe_call, implied_description

__all__ = ["rewrite_expression", "sum_expression"]


def sum_expression(steps: Sequence[int]) -> str:
    """The calculator expression adding these steps' figures."""
    return " + ".join(f"{{$step_{s}_result}}" for s in steps)


def rewrite_expression(plan: Plan, step_id: int, expression: str, depends_on: Sequence[int]) -> Plan | None:
    """``plan`` with step ``step_id``'s ``expression`` argument replaced, depending on ``depends_on``. None when
    that step has no ``expression`` argument, or already computes ``expression`` (so code rewrites a step once)."""
    step = next((s for s in plan.steps if s.step_id == step_id), None)
    if step is None or "expression" not in step.tool_input or step.tool_input["expression"] == expression:
        return None
    tool_input = {**step.tool_input, "expression": expression}
    # A description that only spelled the old call out would show the reviewer an expression no longer run.
    described = describe_call(step.tool_name, tool_input) \
        if step.tool_name is not None and implied_description(step) else step.description
    fixed = step.model_copy(update={"tool_input": tool_input, "depends_on": sorted(set(depends_on)),
                                    "description": described})
    return Plan(steps=[fixed if s.step_id == step_id else s for s in plan.steps])
