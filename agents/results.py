"""The public result of a task (fixed by DESIGN.md).

Example:
    >>> r = TaskResult(task_id="t1", status="refused", stopped_reason="refused")
    >>> r.usage.total.llm_calls
    0
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.events import StoppedReason, TaskStatus
from agents.llm.base import Usage
from agents.checks.api import CheckedReflection
from planning.models import Plan

__all__ = ["StepStatus", "StepResult", "StepTiming", "Timings", "UsageReport", "TaskResult", "CancelOutcome"]

StepStatus = Literal["pending", "running", "completed", "failed", "skipped", "cancelled"]


class StepTiming(BaseModel):
    model_config = ConfigDict(frozen=True)

    started_at: float | None = None
    """Epoch seconds when the latest attempt was dispatched to an executor."""
    finished_at: float | None = None


class StepResult(BaseModel):
    """One step of the final plan, with its latest attempt."""

    model_config = ConfigDict(frozen=True)

    step_id: int
    description: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] = Field(default_factory=dict)
    status: StepStatus
    output: Any = None
    error: str | None = None
    attempts: int = 0
    started_at: float | None = None
    finished_at: float | None = None


class Timings(BaseModel):
    model_config = ConfigDict(frozen=True)

    wall_s: float = 0.0
    first_dispatch_s: float | None = None
    """Submit → first step dispatched; None when no step ran."""
    submitted_at: float = 0.0
    finished_at: float | None = None
    steps: dict[int, StepTiming] = Field(default_factory=dict)


class UsageReport(BaseModel):
    """What a task's model calls used, in total and by role; in USD too with ``RuntimeConfig.prices``.

    Example:
        >>> r = UsageReport().add("router", Usage(llm_calls=1, input_tokens=900), cost_usd=0.0009)
        >>> r.add("planner", Usage(llm_calls=1), cost_usd=None).cost_usd is None, r.cost_by_role
        (True, {'router': 0.0009})
    """

    model_config = ConfigDict(frozen=True)

    total: Usage = Field(default_factory=Usage)
    by_role: dict[str, Usage] = Field(default_factory=dict)
    cost_usd: float | None = None
    """USD the task's calls cost at ``RuntimeConfig.prices`` (each call's tokens at its model's price: the
    live view's cost column computes the same from the same records). None without a price table, or once a
    call's model is not in it: an unknown part makes the sum unknown, not smaller."""
    cost_by_role: dict[str, float | None] = Field(default_factory=dict)
    """``cost_usd`` by role, as ``by_role``."""

    def add(self, role: str, usage: Usage, cost_usd: float | None = None) -> UsageReport:
        """These calls added; ``cost_usd``: what they cost (None: no price table, or a model it does not
        price)."""
        by_role = dict(self.by_role)
        before = by_role.get(role, Usage())
        by_role[role] = before + usage
        costs = dict(self.cost_by_role)
        if cost_usd is not None or role in costs:
            costs[role] = _plus(costs.get(role), before.llm_calls, cost_usd)
        return UsageReport(total=self.total + usage, by_role=by_role,
                           cost_usd=_plus(self.cost_usd, self.total.llm_calls, cost_usd), cost_by_role=costs)


def _plus(known: float | None, calls_before: int, cost: float | None) -> float | None:
    """A running cost plus ``cost``: unknown for good once a part is unknown (a sum of nothing is 0)."""
    if cost is None or (known is None and calls_before):
        return None
    return (known or 0.0) + cost


class TaskResult(BaseModel):
    """What a task ended with. ``error`` is None unless ``status`` is "failed" (what went wrong and what to
    do) or "cancelled" (who cancelled it, and that ``orch.resume`` continues it). ``question`` is set for
    "escalated" and "clarify"."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    status: TaskStatus
    stopped_reason: StoppedReason
    answer: str | None = None
    error: str | None = None
    question: str | None = None
    plan: Plan | None = None
    steps: list[StepResult] = Field(default_factory=list)
    reflections: list[CheckedReflection] = Field(default_factory=list)
    """Every review: the reviewer's verdict and what code's checks (built-in and the user's) held against it."""
    usage: UsageReport = Field(default_factory=UsageReport)
    timings: Timings = Field(default_factory=Timings)
    replans: int = 0
    output: Any = None
    """The answer validated as the task's ``output_type`` (``agents.outputs``), for an accepted task given one; None
    otherwise. JSON data when this process cannot import the type by ``output_type``'s path."""
    output_type: str | None = None
    """The task's ``output_type`` by import path (``module:qualname``), None without one."""
    cancelled_by: str | None = None
    """Who cancelled the task (status "cancelled"), as ``orch.cancel(..., by=...)`` named them: "the API" by
    default, "tetrarch cancel", "the live view", "MCP"."""


class CancelOutcome(BaseModel):
    """What ``handle.cancel()`` / ``orch.cancel(task_id)`` did. Cancelling is idempotent: a task that already
    finished (or was cancelled before) is left as it is, ``cancelled`` is False and ``message`` says why."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    cancelled: bool
    """True when this call stopped the task."""
    status: TaskStatus | Literal["running"]
    """The task's status after the call: "cancelled", or the one it had finished with ("escalated": it waits
    for a human's answer and runs nothing); "running" only when another runner took the task over (a resume)
    before the cancel was recorded."""
    message: str
