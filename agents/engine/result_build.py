"""A task's public result built from its state, and the fingerprint of what a review reads (the task runner
compares two to tell a replan that changed nothing)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from agents.engine.task_state import StepState, TaskState
from agents.outputs import OutputInvalid, OutputTypeError, output_json, validate_output
from agents.results import StepResult, StepTiming, TaskResult, Timings
from agents.roles.messages import StepView
from agents.tools import ToolSpec
from planning.models import Plan

__all__ = ["build_result", "learnable", "review_input", "step_views"]


def step_views(plan: Plan, records: dict[int, StepState], outputs: dict[int, Any]) -> list[StepView]:
    """Each step of ``plan`` as the reviewer (and the checks) see it: its record's status and error, its output."""
    return [StepView(step_id=s.step_id, description=s.description, tool_name=s.tool_name,
                     status=records.get(s.step_id, StepState()).status, output=outputs.get(s.step_id),
                     error=records.get(s.step_id, StepState()).error) for s in plan.steps]


def build_result(st: TaskState, values: dict[int, Any]) -> TaskResult:
    steps = [StepResult(step_id=s.step_id, description=s.description, tool_name=s.tool_name,
                        tool_input=s.tool_input, status=rec.status, output=values.get(s.step_id), error=rec.error,
                        attempts=rec.attempts, started_at=rec.started_at, finished_at=rec.finished_at)
             for s in st.plan_steps for rec in [st.steps.get(s.step_id, StepState())]]
    end = st.finished_at or time.time()
    timings = Timings(
        wall_s=max(0.0, end - st.submitted_at), submitted_at=st.submitted_at, finished_at=st.finished_at,
        first_dispatch_s=None if st.first_dispatch_at is None else st.first_dispatch_at - st.submitted_at,
        steps={r.step_id: StepTiming(started_at=r.started_at, finished_at=r.finished_at) for r in steps})
    return TaskResult(task_id=st.task_id, status=st.status or "failed", stopped_reason=st.stopped_reason or
                      "internal_error", answer=st.answer, error=st.error, question=st.question,
                      plan=Plan(steps=list(st.plan_steps)) if st.plan_steps else None, steps=steps,
                      reflections=list(st.reflections), usage=st.usage, timings=timings, replans=st.replans,
                      cancelled_by=st.cancelled.by if st.cancelled else None, output=typed_output(st),
                      output_type=st.output.type_path if st.output else None)


def typed_output(st: TaskState) -> Any:
    """An accepted answer as the task's output type, as JSON data (the caller's process validates it again into
    the type); None without one, or for an answer a human approved that does not validate."""
    if st.output is None or st.status != "accepted" or not st.answer:
        return None
    try:
        return output_json(st.output, validate_output(st.output, st.answer))
    except (OutputInvalid, OutputTypeError):
        return None


def review_input(plan: Plan, views: Sequence[StepView]) -> str:
    """What decides the reviewer's prompt besides the task: each step's call and what it gave."""
    return json.dumps([[s.tool_name, s.tool_input, s.depends_on, v.status, v.output, v.error]
                       for s, v in zip(plan.steps, views)], sort_keys=True, default=str)


def learnable(st: TaskState, confirm_replanned_writes: bool, tool_spec: Callable[[str | None], ToolSpec | None]) -> bool:
    """Whether an accepted task's plan may become a template: not a session follow-up (its plan depends on
    more than its text), not a plan filled from the cache unchanged, and not a replanned plan with a
    write/admin call — a replan was written after the planner read tool output, and a filled plan runs as a
    first plan, without the confirmation ``confirm_replanned_writes`` asks for such a call."""
    filled = st.cached_template is not None and st.cache_mode != "adapt"  # None: a checkpoint from before adapt
    if st.history or (filled and not st.replans):
        return False
    if st.replans and confirm_replanned_writes:
        specs = [tool_spec(s.tool_name) for s in st.plan_steps if s.tool_name is not None]
        return all(spec is not None and spec.permission == "read" for spec in specs)
    return True
