"""Values that cross the boundary between the Supervisor and the role actors.

Plain frozen dataclasses: cheap to pickle through Ray, no behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from agents.config.prices import CostBudget
from agents.llm.base import Spend
from planning.loops import RepeatedCall
from planning.rejected import RejectedCall
from planning.models import Plan, PlanStep, Reflection
from planning.policy import ReviewAgainReason

__all__ = [
    "PlanCallStarted",
    "PlanCompleted",
    "PlanFailed",
    "PlanItem",
    "PlanRestarted",
    "ReplanContext",
    "RoleResult",
    "SecondLook",
    "StepEmitted",
    "StepErrorKind",
    "StepOutcome",
    "StepRequest",
    "StepView",
]

T = TypeVar("T")

StepErrorKind = Literal["argument", "transient", "permanent", "timeout", "unknown_tool", "permission",
                        "dependency", "llm", "cancelled", "executor_died", "max_cost_usd"]


@dataclass(frozen=True, slots=True)
class RoleResult(Generic[T]):
    """A role's answer plus what it cost and the LLM calls it made (for the event log / ReplayLLM)."""

    value: T
    spend: Spend = field(default_factory=Spend)


@dataclass(frozen=True, slots=True)
class SecondLook:
    """The reviewer looks again at results it has reviewed (``planning.policy.ReviewAgain``): what code found, why
    it asks, and the review being looked at again (its verdict and scores stand when only the answer is written
    again, ``Reflector.reflect``)."""

    feedback: str
    reason: ReviewAgainReason
    previous: Reflection

    @property
    def answer_fault(self) -> bool:
        """Code found the answer wrong (``planning.policy.ReviewAgain.answer_fault``)."""
        return self.reason == "wrong_answer"


@dataclass(frozen=True, slots=True)
class StepRequest:
    task_id: str
    task: str
    plan_version: int
    step: PlanStep
    attempt: int
    timeout_s: float
    modification: str | None = None
    """The reflector's instruction when this attempt is a retry_step."""
    confirmed: bool = False
    generation: int = 0
    """The task lease generation of the runner that sent this (0: unfenced); a write tool claims its key with it."""
    dispatch: int = 0
    """How many times this attempt was sent again after its executor died (a later send takes the claim over)."""
    inputs_about: Mapping[int, str] = field(default_factory=dict)
    """What each step this one depends on looked up (its description and text arguments): which number in its
    output is the relevant one (``agents.checks.numeric.figures``)."""
    read_through: Mapping[int, int] = field(default_factory=dict)
    """For each dependency that is a reasoning step reading one tool step's output: that step (its output is
    among the inputs too). When the reasoning step answered a name where this step needs a number, the figure is
    read from that output's passage about the name (``agents.roles.figure_fit.named_passage``)."""
    cost: CostBudget | None = None
    """The money budget each model call of this attempt is checked against (``max_cost_usd``)."""


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """Result of one step attempt. ``output`` travels separately (object store) on Ray."""

    step_id: int
    attempt: int
    ok: bool
    started_at: float
    finished_at: float
    output: Any = None
    error_kind: StepErrorKind | None = None
    error: str | None = None
    spend: Spend = field(default_factory=Spend)
    executor: str = ""
    node_id: str = ""
    tool_attempts: int = 0
    from_journal: bool = False
    arguments: dict[str, Any] | None = None
    """The arguments the tool finally ran with (after ref resolution and any repair)."""
    output_inline: bool = False
    """``output`` travelled in the outcome itself (small outputs on Ray; always in-process)."""
    speculative: bool = False
    """The result came from a call started before the plan named the step (``agents.engine.speculation``)."""

    def without_output(self) -> StepOutcome:
        return StepOutcome(**{**{f: getattr(self, f) for f in self.__dataclass_fields__}, "output": None})


@dataclass(frozen=True, slots=True)
class PlanCallStarted:
    """A planner model call is about to be sent. ``spent`` is what the plan stream has cost so far if it is
    abandoned from here on (every earlier round, plus this call's prompt): a speculative plan cancelled because
    the route was not ``plan`` is charged with it (the server never reports usage for a cancelled stream)."""

    spent: Spend
    kind: Literal["call"] = "call"


@dataclass(frozen=True, slots=True)
class StepEmitted:
    step: PlanStep
    output_tokens: int = 0
    """Tokens the current call had written when this step closed (its share of an abandoned stream's cost)."""
    kind: Literal["step"] = "step"


@dataclass(frozen=True, slots=True)
class PlanRestarted:
    """The streamed plan was invalid; a repaired plan follows from scratch."""

    error: str
    kind: Literal["restart"] = "restart"


@dataclass(frozen=True, slots=True)
class PlanCompleted:
    plan: Plan
    spend: Spend
    cut: RepeatedCall | None = None
    """The planner stopped reading a looping reply at this step (``planning.loops``): ``plan`` is what the model
    wrote before it. The steps were emitted as usual; only the rest of the reply was left unread."""
    kind: Literal["completed"] = "completed"


@dataclass(frozen=True, slots=True)
class PlanFailed:
    error: str
    reason: Literal["invalid_plan", "invalid_llm_output", "llm_unavailable", "max_cost_usd"]
    spend: Spend
    kind: Literal["failed"] = "failed"


PlanItem = PlanCallStarted | StepEmitted | PlanRestarted | PlanCompleted | PlanFailed


@dataclass(frozen=True, slots=True)
class StepView:
    """What the reflector (and a replanning planner) sees of one step."""

    step_id: int
    description: str
    tool_name: str | None
    status: str
    output: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ReplanContext:
    feedback: str
    previous_plan: Plan
    results: tuple[StepView, ...]
    kept: tuple[int, ...] = ()
    """Completed steps of ``previous_plan`` whose outputs the new plan keeps (a delta replan refers to them)."""
    rejected: tuple[RejectedCall, ...] = ()
    """Calls a tool rejected earlier in the task that no write has made valid since (``planning.rejected``)."""
