"""Calls a tool has already rejected in this task: a replan that writes one again is asked for something else.

A small planner told "the tool rejected ticker='ACME'" in its replan feedback often writes the very same call
again; it fails the same way, and the loop detector stops the task on the third copy. This module lets the
planner refuse such a step at once, in its repair round, with the tool's own words.

When the refusal is sound (its precondition, true for any tool):

- the tool itself rejected these arguments (an argument error: it said its input is invalid), after the
  executor's repair round had already tried other arguments for it;
- the tool only reads (``[read]`` in the catalog): calling it did not change what it knows;
- no step with side effects has completed in the task since (a write may be what makes the input valid, e.g.
  creating the customer a lookup did not find): the engine forgets the rejections when one completes;
- the new step makes the same call: same tool and the same literal input (a step whose input refers to another
  step's output is never matched — its arguments are not known before it runs).

Under these the same call meets the same rejection, so the step is a known failure. The planner is only asked
again (one repair round, as for any invalid plan), never told which tool to use.

    >>> from planning.models import PlanStep
    >>> seen = [RejectedCall(tool_name="stock_price", tool_input={"ticker": "ACME"}, error="unknown ticker 'ACME'")]
    >>> again = PlanStep(step_id=4, tool_name="stock_price", tool_input={"ticker": "ACME"})
    >>> rejected_repeat(again, seen).error
    "unknown ticker 'ACME'"
    >>> rejected_repeat(PlanStep(step_id=5, tool_name="company_search", tool_input={"name": "ACME"}), seen) is None
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from dag.refs import references
from planning.models import PlanStep
from planning.validate import PlanProblem, ProblemCode

__all__ = ["MAX_REJECTED_CALLS", "RejectedCall", "rejected_problem", "rejected_repeat", "remember_rejection"]

MAX_REJECTED_CALLS = 16
"""Rejections kept per task (the oldest go first): the state is checkpointed and must stay small."""


class RejectedCall(BaseModel):
    """``tool_name`` refused ``tool_input`` with ``error`` (an argument error, after the executor's repair)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_name: str
    tool_input: dict[str, Any]
    error: str

    def key(self) -> str:
        return _key(self.tool_name, self.tool_input)


def _key(tool_name: str, tool_input: Any) -> str:
    return json.dumps([tool_name, tool_input], sort_keys=True, default=str)


def remember_rejection(rejected: Sequence[RejectedCall], step: PlanStep, arguments: dict[str, Any] | None,
                       error: str) -> list[RejectedCall]:
    """``rejected`` plus what ``step``'s rejection teaches: the plan's literal input and the arguments the tool
    finally ran with (the executor's repair may have changed them); neither twice, at most
    ``MAX_REJECTED_CALLS``."""
    assert step.tool_name is not None, "only a tool call can be rejected by a tool"
    calls = list(rejected)
    known = {c.key() for c in calls}
    inputs = [step.tool_input] if not references(step.tool_input) else []
    if arguments is not None:
        inputs.append(arguments)
    for tool_input in inputs:
        call = RejectedCall(tool_name=step.tool_name, tool_input=dict(tool_input), error=error)
        if call.key() not in known:
            known.add(call.key())
            calls.append(call)
    return calls[-MAX_REJECTED_CALLS:]


def rejected_repeat(step: PlanStep, rejected: Iterable[RejectedCall]) -> RejectedCall | None:
    """The rejected call ``step`` makes again (same tool, same literal input), else None."""
    if step.tool_name is None or references(step.tool_input):
        return None
    key = _key(step.tool_name, step.tool_input)
    return next((c for c in rejected if c.key() == key), None)


def rejected_problem(step: PlanStep, call: RejectedCall) -> PlanProblem:
    """What the planner's repair round is told: the tool's own error, and that the same call fails again."""
    shown = ", ".join(f"{k}={v!r}" for k, v in call.tool_input.items())
    return PlanProblem(
        ProblemCode.REJECTED_CALL,
        f"step {step.step_id} calls {call.tool_name}({shown}) again, but {call.tool_name} already rejected exactly "
        f"this call in this task: {call.error}. The same call fails the same way. Use a different tool whose "
        f"description fits what this step needs, or arguments {call.tool_name} accepts.",
        step.step_id)
