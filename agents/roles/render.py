"""How plans and step results are shown to the LLM roles (the same text for planner, reflector, executor)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents.checks.facts import Fact, render_facts
from agents.roles.messages import StepView
from planning.models import Plan
from planning.terse import TerseEncodingError, render_terse_step
from planning.terse_line import implied_description
from prompts import fence_untrusted

__all__ = ["output_text", "render_checks", "render_inputs", "render_plan", "render_results", "step_calls"]


def render_checks(facts: Sequence[Fact]) -> str:
    """The facts code checked (``agents.checks.review.result_facts``) under their heading, or nothing when there are none: the
    lean reviewer (reflector/v11) is not told "nothing found", which costs tokens and reads like a
    verification."""
    return f"Checked by code:\n{render_facts(facts)}" if facts else ""


def output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, default=str)


def render_plan(plan: Plan) -> str:
    lines = []
    for s in plan.steps:
        call = f"{s.tool_name}({json.dumps(s.tool_input, ensure_ascii=False)})" if s.tool_name else "reasoning"
        deps = f" after {s.depends_on}" if s.depends_on else ""
        # A description implied by the call (a short JSON or terse step) would say the call twice.
        lines.append(f"{s.step_id}. {call}{deps}" if implied_description(s) or not s.description else
                     f"{s.step_id}. {s.description} — {call}{deps}")
    return "\n".join(lines)


def step_calls(plan: Plan, params: Mapping[str, Sequence[str]] | None = None) -> dict[int, str]:
    """Step id → its arguments as the terse plan writes them (``("Rome", "population")``, ``$N`` for step N's
    output; by position where ``params`` gives the tool's parameter order), for one line a step that holds both
    the call and its result (``prompts.compact.render_results_compact(..., calls=...)``).

    >>> from planning.models import PlanStep
    >>> plan = Plan(steps=[PlanStep(step_id=1, description="x", tool_name="lookup", tool_input={"city": "Rome"}),
    ...                    PlanStep(step_id=2, description="y", tool_name="double",
    ...                             tool_input={"n": "$step_1_result"}, depends_on=[1])])
    >>> step_calls(plan, {"lookup": ["city"]})
    {1: '("Rome")  # x', 2: '(n=$1)  # y'}
    """
    calls = {}
    for step in plan.steps:
        name = step.tool_name or "think"
        try:
            line = render_terse_step(step, params)
            calls[step.step_id] = line.removeprefix(f"{step.step_id}. {name}")
        except TerseEncodingError:  # a tool name the terse form cannot write: the arguments as JSON
            calls[step.step_id] = f"({json.dumps(step.tool_input, ensure_ascii=False, default=str)})"
    return calls


def render_results(results: Iterable[StepView]) -> str:
    """Every step's status and output; outputs are untrusted data and fenced as such."""
    parts = []
    for r in results:
        head = f"step {r.step_id} ({r.tool_name or 'reasoning'}) — {r.status}"
        if r.status == "completed":
            parts.append(f"{head}:\n{fence_untrusted(output_text(r.output), f'step {r.step_id} output')}")
        elif r.error:
            parts.append(f"{head}: {fence_untrusted(r.error, f'step {r.step_id} error')}")
        else:
            parts.append(head)
    return "\n\n".join(parts) if parts else "(no steps ran)"


def render_inputs(inputs: Mapping[int, Any]) -> str:
    if not inputs:
        return "(none)"
    return "\n\n".join(fence_untrusted(output_text(v), f"step {k} output") for k, v in sorted(inputs.items()))
