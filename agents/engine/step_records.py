"""A step's record in the checkpoint, derived: the scheduler owns status and attempt; ``StepFacts`` holds the
rest of what one attempt left behind (timings, error kind, journal use). Nothing keeps a status of its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.engine.task_state import StepState
from agents.results import StepStatus
from dag.scheduler import Scheduler
from dag.scheduler import StepState as SchedState
from planning.models import PlanStep

__all__ = ["StepFacts", "derive_records", "restore"]

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
    records = {}
    for sid, step in steps.items():
        state, fact = sched.state(sid), facts[sid]
        failed = state is SchedState.FAILED
        error = fact.error if failed else None
        if state is SchedState.SKIPPED:
            dead = [d for d in sorted(step.depends_on) if d in steps and sched.state(d) is not SchedState.COMPLETED]
            error = f"skipped: step {dead[0]} did not complete" if dead else "skipped"
        records[sid] = StepState(status=_STATUS[state], attempts=sched.attempt(sid), error=error,
                                 error_kind=fact.error_kind if failed else None, started_at=fact.started_at,
                                 finished_at=fact.finished_at, tool_attempts=fact.tool_attempts,
                                 from_journal=fact.from_journal)
    return records


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
