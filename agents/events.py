"""Typed task events (fixed by DESIGN.md): each has ``type``, ``task_id``, ``seq``, ``ts`` and a typed ``payload``.

Events are what ``handle.events()`` streams live, what the store appends with every checkpoint, and
what traces are rebuilt from.

Example:
    >>> ev = parse_event({"type": "step_started", "task_id": "t1", "seq": 3, "ts": 1.0,
    ...                   "payload": {"step_id": 2, "attempt": 1, "tool_name": "calculator"}})
    >>> ev.payload.step_id
    2
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from planning.loops import RepeatedCall
from agents.checks.api import CheckedReflection
from planning.models import PlanStep
from planning.policy import DecisionKind

__all__ = [
    "EventType",
    "TaskStatus",
    "StoppedReason",
    "Event",
    "TaskSubmitted",
    "Routed",
    "PlanStepEvent",
    "StepStarted",
    "StepFinished",
    "StepFailed",
    "Reflected",
    "Replanned",
    "Escalated",
    "TaskFinished",
    "AnswerDeltaEvent",
    "AnswerResetEvent",
    "AnswerDeltaPayload",
    "AnswerResetPayload",
    "AnyEvent",
    "parse_event",
    "make_event",
    "EVENT_TYPES",
    "TaskSubmittedPayload",
    "RoutedPayload",
    "PlanStepPayload",
    "StepStartedPayload",
    "StepFinishedPayload",
    "StepFailedPayload",
    "ReflectedPayload",
    "ReplannedPayload",
    "EscalatedPayload",
    "TaskFinishedPayload",
    "PlanCut",
]

EventType = Literal[
    "task_submitted",
    "routed",
    "plan_step",
    "step_started",
    "step_finished",
    "step_failed",
    "reflected",
    "replanned",
    "escalated",
    "task_finished",
    "answer_delta",
    "answer_reset",
]
EVENT_TYPES: tuple[str, ...] = EventType.__args__  # type: ignore[attr-defined]

TaskStatus = Literal["accepted", "escalated", "clarify", "refused", "failed", "cancelled"]

StoppedReason = Literal[
    "accepted",
    "direct_answer",
    "clarify",
    "refused",
    "escalated_by_reflector",
    "max_replans",
    "max_step_retries",
    "needs_confirmation",
    "invalid_llm_output",
    "invalid_plan",
    "max_steps",
    "step_timeout",
    "task_timeout",
    "token_budget",
    "max_llm_calls",
    "max_cost_usd",
    "consecutive_errors",
    "loop_detected",
    "llm_unavailable",
    "role_unavailable",
    "prompt_too_long",
    "check_failed",
    "invalid_output",
    "cancelled",
    "internal_error",
]


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    seq: int
    ts: float


class TaskSubmittedPayload(_Payload):
    task: str


class RoutedPayload(_Payload):
    route: Literal["plan", "direct", "clarify", "refuse"]
    confidence: float
    reason: str = ""
    plan_cache: dict[str, str] | None = None
    """A plan cache hit: ``{"template_id": ..., "mode": "filled"}`` (the plan was filled by code, no planner
    call); None otherwise."""


class PlanStepPayload(_Payload):
    step: PlanStep
    plan_version: int = 1
    """1 for the first plan, +1 for every replan."""


class StepStartedPayload(_Payload):
    step_id: int
    attempt: int
    tool_name: str | None = None
    plan_version: int = 1
    executor: str = ""
    node_id: str = ""


class StepFinishedPayload(_Payload):
    step_id: int
    attempt: int
    output_preview: str = ""
    started_at: float
    finished_at: float
    plan_version: int = 1
    executor: str = ""
    node_id: str = ""
    """The Ray node the step ran on (as the executor reported it)."""
    speculative: bool = False
    """The output is a speculated call's: started at submit from a cached plan, before the plan named this step, and
    used because the step is the same call (``agents.engine.speculation``)."""


class StepFailedPayload(_Payload):
    step_id: int
    attempt: int
    error_kind: Literal["argument", "transient", "permanent", "timeout", "unknown_tool", "permission",
                        "dependency", "llm", "cancelled", "executor_died", "max_cost_usd"]
    """``agents.roles.messages.StepErrorKind`` (the same values: a test holds them equal)."""
    error: str
    will_retry: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    plan_version: int = 1
    executor: str = ""
    node_id: str = ""


class ReflectedPayload(_Payload):
    reflection: CheckedReflection
    """The reviewer's verdict with what code's checks (built-in and the user's) held against its answer."""
    decision: DecisionKind
    reason: str = ""


class ReplannedPayload(_Payload):
    plan_version: int
    feedback: str
    kept_steps: list[int] = Field(default_factory=list)


class EscalatedPayload(_Payload):
    reason: str
    question: str
    kind: Literal["reflector", "caps", "confirmation"] = "reflector"
    step_id: int | None = None
    answer: str | None = None
    """Set on the event that records a human's answer (``orch.respond``), written before the task continues; the
    escalation it answers is the one before it. None on the escalation itself."""
    answered_by: str | None = None
    """Who answered, as the caller named them (``orch.respond(..., by=...)``; the web view's answer form)."""


class PlanCut(_Payload):
    """The planner stopped reading plan ``plan_version``'s stream where the model was looping: it wrote the
    ``repeated`` call a third time (``planning.loops``). That plan is the steps written before; they ran."""

    plan_version: int
    repeated: RepeatedCall
    reason: Literal["repeated_call"] = "repeated_call"

    def describe(self) -> str:
        return f"plan v{self.plan_version}: {self.repeated.describe()}"


class TaskFinishedPayload(_Payload):
    status: TaskStatus
    stopped_reason: StoppedReason
    answer: str | None = None
    error: str | None = None
    plan_cuts: list[PlanCut] = Field(default_factory=list)
    """Plans that ended early because the planner was looping. Carried here, not in an event of its own, since
    the event types are fixed (DESIGN.md): the task's outcome is where a cut plan explains itself."""
    cancelled_by: str | None = None
    """Who cancelled the task (status "cancelled"): "the API", "tetrarch cancel", "the live view", "MCP", or
    the name the caller gave ``orch.cancel(..., by=...)``."""


class AnswerDeltaPayload(_Payload):
    """A piece of the answer as the reviewer writes it, once its reply has accepted (``handle.stream_answer``)."""

    text: str


class AnswerResetPayload(_Payload):
    """The accept the streamed answer came from did not count (a check or the policy refused it, or the reply was
    repaired): the text streamed since the last reset is void; a new stream may follow."""

    reason: str = ""


class TaskSubmitted(_Event):
    type: Literal["task_submitted"] = "task_submitted"
    payload: TaskSubmittedPayload


class Routed(_Event):
    type: Literal["routed"] = "routed"
    payload: RoutedPayload


class PlanStepEvent(_Event):
    type: Literal["plan_step"] = "plan_step"
    payload: PlanStepPayload


class StepStarted(_Event):
    type: Literal["step_started"] = "step_started"
    payload: StepStartedPayload


class StepFinished(_Event):
    type: Literal["step_finished"] = "step_finished"
    payload: StepFinishedPayload


class StepFailed(_Event):
    type: Literal["step_failed"] = "step_failed"
    payload: StepFailedPayload


class Reflected(_Event):
    type: Literal["reflected"] = "reflected"
    payload: ReflectedPayload


class Replanned(_Event):
    type: Literal["replanned"] = "replanned"
    payload: ReplannedPayload


class Escalated(_Event):
    type: Literal["escalated"] = "escalated"
    payload: EscalatedPayload


class TaskFinished(_Event):
    type: Literal["task_finished"] = "task_finished"
    payload: TaskFinishedPayload


class AnswerDeltaEvent(_Event):
    type: Literal["answer_delta"] = "answer_delta"
    payload: AnswerDeltaPayload


class AnswerResetEvent(_Event):
    type: Literal["answer_reset"] = "answer_reset"
    payload: AnswerResetPayload


AnyEvent = Annotated[
    Union[TaskSubmitted, Routed, PlanStepEvent, StepStarted, StepFinished, StepFailed, Reflected,
          Replanned, Escalated, TaskFinished, AnswerDeltaEvent, AnswerResetEvent],
    Field(discriminator="type"),
]
Event = AnyEvent

_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyEvent)


def parse_event(data: dict[str, Any] | str) -> AnyEvent:
    """Rebuild a typed event from its dict (or JSON) form, e.g. a row of the store's event log."""
    if isinstance(data, str):
        return _ADAPTER.validate_json(data)
    return _ADAPTER.validate_python(data)


_EVENT_BY_PAYLOAD: dict[type, type] = {
    TaskSubmittedPayload: TaskSubmitted, RoutedPayload: Routed, PlanStepPayload: PlanStepEvent,
    StepStartedPayload: StepStarted, StepFinishedPayload: StepFinished, StepFailedPayload: StepFailed,
    ReflectedPayload: Reflected, ReplannedPayload: Replanned, EscalatedPayload: Escalated,
    TaskFinishedPayload: TaskFinished, AnswerDeltaPayload: AnswerDeltaEvent, AnswerResetPayload: AnswerResetEvent,
}


def make_event(payload: _Payload, *, task_id: str, seq: int, ts: float) -> AnyEvent:
    """The typed event that carries ``payload``."""
    return _EVENT_BY_PAYLOAD[type(payload)](task_id=task_id, seq=seq, ts=ts, payload=payload)
