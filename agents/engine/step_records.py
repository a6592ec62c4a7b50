"""A step's record in the checkpoint, derived: the scheduler owns status and attempt; ``StepFacts`` holds the
rest of what one attempt left behind (timings, error kind, journal use). Nothing keeps a status of its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.engine.task_state import StepState, TaskState
from agents.results import StepStatus
from dag.scheduler import Scheduler
from dag.scheduler import StepState as SchedState
from planning.models import PlanStep

__all__ = ["StepFacts", "checkpoint_delta", "derive_record", "derive_records", "restore"]

_STATUS: dict[SchedState, StepStatus] = {s: s.value for s in SchedState}  # type: ignore[misc]


@dataclass(slots=True)
class StepFacts:
    """What the scheduler does not model about a step's latest attempt (never its status)."""

    error_kind: str | None = None
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    tool_attempts: int = 0
    from_journal: bool = False


def derive_records(sched: Scheduler, steps: Mapping[int, PlanStep],
                   facts: Mapping[int, StepFacts]) -> dict[int, StepState]:
    """The checkpoint's step records: status and attempt read from ``sched``, the rest from ``facts``."""
    return {sid: derive_record(sched, steps, facts, sid) for sid in steps}


def derive_record(sched: Scheduler, steps: Mapping[int, PlanStep], facts: Mapping[int, StepFacts],
                  sid: int) -> StepState:
    """One step's record (a completed step's checkpoint delta carries only its own)."""
    step, state, fact = steps[sid], sched.state(sid), facts[sid]
    failed = state is SchedState.FAILED
    error = fact.error if failed else None
    if state is SchedState.SKIPPED:
        dead = [d for d in sorted(step.depends_on) if d in steps and sched.state(d) is not SchedState.COMPLETED]
        error = f"skipped: step {dead[0]} did not complete" if dead else "skipped"
    return StepState(status=_STATUS[state], attempts=sched.attempt(sid), error=error,
                     error_kind=fact.error_kind if failed else None, started_at=fact.started_at,
                     finished_at=fact.finished_at, tool_attempts=fact.tool_attempts, from_journal=fact.from_journal)


def restore(plan: Sequence[PlanStep], records: Mapping[int, StepState],
            stored: Mapping[int, Any]) -> tuple[Scheduler, dict[int, StepFacts], dict[int, Any]]:
    """Rebuild a sealed scheduler from a checkpoint (resume): a completed step with a stored output is
    preloaded, never run again; a step a human refused stays failed (continuing must not ask again); every
    other step is pending. Returns the scheduler, each step's facts and the outputs of completed steps."""
    sched, facts, values = Scheduler(), {}, {}
    refused: list[tuple[int, str]] = []
    for step in plan:
        sid, record = step.step_id, records.get(step.step_id, StepState())
        if record.status == "completed" and sid in stored:
            sched.preload(sid, step.depends_on, stored[sid], record.attempts)
            values[sid] = stored[sid]
            facts[sid] = StepFacts(started_at=record.started_at, finished_at=record.finished_at,
                                   tool_attempts=record.tool_attempts, from_journal=record.from_journal)
        else:
            sched.add_step(sid, step.depends_on)
            facts[sid] = StepFacts()
            if record.status == "failed" and record.error_kind == "permission":
                refused.append((sid, record.error or "refused"))
    sched.seal()
    for sid, error in refused:
        sched.start(sid)
        sched.fail(sid, error)
        facts[sid] = StepFacts(error_kind="permission", error=error)
    return sched, facts, values


_NOT_IN_DELTA = frozenset({"task_id", "task", "submitted_at", "steps", "plan_steps"})
"""Fields a delta never carries: fixed for the task's life, or carried piecewise (the changed step records,
the plan steps streamed since the last write)."""


def checkpoint_delta(state: TaskState, records: Mapping[int, StepState], plan_from: int) -> dict[str, Any]:
    """What changed since the stored state (``agents.store.batch.apply_delta``): ``records`` of the steps that
    changed, the plan steps from index ``plan_from`` on, and the task's other fields (small, bounded by the
    number of reflections, not by the plan's length)."""
    return {"fields": state.model_dump(mode="json", exclude=set(_NOT_IN_DELTA)),
            "steps": {str(sid): rec.model_dump(mode="json") for sid, rec in records.items()},
            "plan_from": plan_from,
            "plan_steps": [step.model_dump(mode="json") for step in state.plan_steps[plan_from:]]}
