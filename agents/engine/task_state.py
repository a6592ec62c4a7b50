"""The checkpointed state of one task. JSON-serialisable; small and bounded by the plan size.

Together with the event log and the stored step outputs, this is everything needed to resume a
task in a new process (``orch.resume``) or after a Supervisor restart.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.events import PlanCut, StoppedReason, TaskStatus
from agents.outputs import OutputSpec
from agents.results import StepStatus, UsageReport
from agents.checks.api import CheckedReflection
from agents.roles.messages import SecondLook
from planning.models import PlanStep, Reflection
from planning.policy import ReviewAgainReason
from planning.rejected import RejectedCall

__all__ = ["CancelNote", "Phase", "StepState", "Escalation", "ReviewAgainNote", "TaskState"]

Phase = Literal["route", "plan", "execute", "reflect", "waiting", "done"]


class StepState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: StepStatus = "pending"
    attempts: int = 0
    error: str | None = None
    error_kind: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    tool_attempts: int = 0
    from_journal: bool = False


class Escalation(BaseModel):
    kind: Literal["reflector", "caps", "confirmation"]
    reason: str
    question: str
    step_id: int | None = None


class CancelNote(BaseModel):
    """Who cancelled the task, and where its run was then: ``orch.resume`` continues it from that phase."""

    model_config = ConfigDict(extra="forbid")

    by: str
    phase: Phase
    at: float


class ReviewAgainNote(BaseModel):
    """One "review once more": code refused the reviewer's answer although the plan's results held."""

    model_config = ConfigDict(extra="forbid")

    feedback: str
    """What code found wrong with the answer, what it leaves out, or that only the review's scores were low."""
    reason: ReviewAgainReason = "wrong_answer"
    plan_version: int
    """The plan version whose results are reviewed again."""
    asked_at: int
    """How many reviews the task had when this was decided: the next review (and only it) is told ``feedback``."""

    @model_validator(mode="before")
    @classmethod
    def _read_older_checkpoint(cls, data: Any) -> Any:
        """Checkpoints written before the reason was named kept whether code found the answer wrong."""
        if isinstance(data, dict) and "answer_fault" in data:
            data = dict(data)
            data["reason"] = "wrong_answer" if data.pop("answer_fault") else "low_scores"
        return data

    def pending(self, reviews: int) -> bool:
        return reviews == self.asked_at


class TaskState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _read_older_checkpoint(cls, data: Any) -> Any:
        """Checkpoints written before the note was one field kept three (text, fault, version): read them."""
        if not isinstance(data, dict) or not isinstance(data.get("review_again", None), str):
            return data
        data = dict(data)
        text, fault = data.pop("review_again"), data.pop("review_again_fault", True)
        version = data.pop("reviewed_again_version", 0)
        reviews = len(data.get("reflections") or [])
        data["review_again"] = None if not version else {
            "feedback": text, "reason": "wrong_answer" if fault else "low_scores", "plan_version": version,
            "asked_at": reviews if text else -1}
        return data

    task_id: str
    task: str
    output: OutputSpec | None = None
    """The task's ``output_type`` (``agents.outputs``), by import path and schema, so a resume rebuilds it."""
    session_id: str | None = None
    """The session this task is a turn of (``orch.session()``); its turn is finished with the result."""
    history: str = ""
    """The session's earlier turns, rendered within their token budget when the task was submitted: the router
    and the planner see them (kept in the checkpoint, so a resumed turn sees the same history)."""
    cached_template: str | None = None
    """The plan cache template this task's first plan came from (``cache_mode``)."""
    cache_mode: Literal["filled", "adapt"] | None = None
    """How the template was reused: ``filled`` by code (no planner call) or given to the planner to ``adapt``."""
    cache_outcome_recorded: bool = False
    run: int = 1
    """1 for the first run; +1 each time respond()/resume() continues the task."""
    phase: Phase = "route"
    submitted_at: float
    first_dispatch_at: float | None = None

    plan_version: int = 0
    plan_steps: list[PlanStep] = Field(default_factory=list)
    plan_complete: bool = False
    drafted_answer: str | None = None
    """The answer's shape the current plan's planner wrote after its steps (``Plan.answer``): the reviewer is
    shown it filled from the results, and may accept it as the answer."""
    plan_cuts: list[PlanCut] = Field(default_factory=list)
    """Plans the planner ended early at a looping step (reported with the task's outcome)."""
    steps: dict[int, StepState] = Field(default_factory=dict)
    """The step records as of the last checkpoint, written from the running plan's scheduler at each write
    (``PlanExecution.checkpoint``). While a plan runs, read the live ones (``TaskRunner._records``), not these."""
    step_retries: dict[int, int] = Field(default_factory=dict)
    modifications: dict[int, str] = Field(default_factory=dict)
    confirmed: list[int] = Field(default_factory=list)
    replans: int = 0
    argument_replans: int = 0
    """Replans started straight from a tool's rejection of its arguments (after the executor's repair round),
    without a reflector call: one per task, then the reflector judges."""
    extra_replans: int = 0
    """Replans granted by a human's answer to an escalation, on top of max_replans."""
    review_again: ReviewAgainNote | None = None
    """The last time code found the reviewer's answer wrong over results that held (``planning.policy.ReviewAgain``):
    what the next review is told, and the plan version it was for (a plan version is reviewed again once)."""
    checked_answer: str | None = None
    """The latest answer a review proposed that code found consistent with the results (``ReflectionContext.
    checked``), accepted or not: an escalation proposes it when a later review's answer is worse or missing."""

    usage: UsageReport = Field(default_factory=UsageReport)
    reflections: list[CheckedReflection] = Field(default_factory=list)
    consecutive_errors: int = 0
    failure_signatures: dict[str, int] = Field(default_factory=dict)
    rejected_calls: list[RejectedCall] = Field(default_factory=list)
    """Read calls a tool rejected as invalid input since the last write completed: a replan is refused them."""
    escalation: Escalation | None = None
    human_response: str | None = None

    status: TaskStatus | None = None
    stopped_reason: StoppedReason | None = None
    answer: str | None = None
    error: str | None = None
    question: str | None = None
    finished_at: float | None = None
    cancelled: CancelNote | None = None
    """Set while the task is cancelled (``agents.engine.cancel``); a resume clears it."""

    def second_look(self) -> SecondLook | None:
        """What the next review is told about the review before it, or None when it is not a second look."""
        note = self.review_again
        if note is None or not note.pending(len(self.reflections)) or not self.reflections:
            return None
        previous = Reflection.model_validate(self.reflections[-1].model_dump(exclude={"checks"}))
        return SecondLook(note.feedback, note.reason, previous)

    def reviewed_again(self) -> bool:
        """Whether the current plan version's results were already reviewed once more."""
        return self.review_again is not None and self.review_again.plan_version == self.plan_version
