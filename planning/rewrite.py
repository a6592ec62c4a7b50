"""A computing step given the expression the task asks for, when code can tell it (``planning.ratio``, a total
``planning.evidence.total_fault`` found short): the rest of the plan stays as the planner wrote it.

    >>> from planning.models import Plan, PlanStep
    >>> plan = Plan(steps=[PlanStep(step_id=1, tool_name="doc_search", tool_input={"query": "length of the Rhine"}),
    ...                    PlanStep(step_id=2, tool_name="doc_search", tool_input={"query": "length of the Thames"}),
    ...                    PlanStep(step_id=3, tool_name="calculator", depends_on=[1, 2], tool_input={
    ...                             "expression": "max({$step_1_result}, {$step_2_result}) - min({$step_1_result}, "
    ...                                           "{$step_2_result})"})])
    >>> rewrite_expression(plan, 3, sum_expression([1, 2]), [1, 2]).step(3).tool_input
    {'expression': '{$step_1_result} + {$step_2_result}'}
"""

from __future__ import annotations

from collections.abc import Sequence

from planning.models import Plan

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
    fixed = step.model_copy(update={"tool_input": {**step.tool_input, "expression": expression},
                                    "depends_on": sorted(set(depends_on))})
    return Plan(steps=[fixed if s.step_id == step_id else s for s in plan.steps])
