"""How a plan's execution ends, as closed values, and the failure caps that can end it early.

``PlanExecution.run`` returns one of ``AllTerminal | AwaitingConfirmation | Stopped``; the task runner matches
on it. Nothing here raises across modules to steer control flow.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agents.config import DispatchOptions, RuntimeConfig
from agents.engine.budget import Budget
from agents.engine.task_state import TaskState
from agents.events import StoppedReason
from agents.llm.profile import ModelProfile, Strategy
from agents.roles.messages import StepOutcome
from planning.models import PlanStep

__all__ = ["AllTerminal", "AwaitingConfirmation", "ExecutionResult", "FailureCaps", "Limits", "Stopped"]


@dataclass(frozen=True, slots=True)
class AllTerminal:
    """Every step of the plan completed, failed or was skipped: time to reflect."""


@dataclass(frozen=True, slots=True)
class AwaitingConfirmation:
    """The only work left waits for a human to approve these steps' tool calls."""

    step_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Stopped:
    """The task cannot go on: ``reason`` is its stopped reason, ``error`` says what to do."""

    reason: StoppedReason
    error: str


ExecutionResult = AllTerminal | AwaitingConfirmation | Stopped


@dataclass(frozen=True, slots=True)
class FailureCaps:
    """Stop a task that keeps failing: the same call failing ``loop_window`` times (a loop), or
    ``max_consecutive_errors`` step failures in a row."""

    max_consecutive_errors: int
    loop_window: int

    def after_failure(self, state: TaskState, step: PlanStep, outcome: StepOutcome) -> Stopped | None:
        """Count the failure in ``state`` (its counters are checkpointed) and say whether the task must stop."""
        state.consecutive_errors += 1
        arguments = outcome.arguments if outcome.arguments is not None else step.tool_input
        signature = json.dumps([step.tool_name, arguments, outcome.error_kind], sort_keys=True, default=str)
        seen = state.failure_signatures[signature] = state.failure_signatures.get(signature, 0) + 1
        if seen >= self.loop_window:
            return Stopped("loop_detected", (
                f"step {step.step_id} ({step.tool_name or 'reasoning'}) failed the same way {seen} times with the "
                f"same arguments: {outcome.error}. Fix the tool or its input; the task can be resumed afterwards."))
        if state.consecutive_errors >= self.max_consecutive_errors:
            return Stopped("consecutive_errors", (
                f"{state.consecutive_errors} step failures in a row (last: step {step.step_id}: {outcome.error}); "
                "check the tools and their inputs"))
        return None


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps one execution enforces on the task it belongs to."""

    dispatch: DispatchOptions
    budget: Budget
    failures: FailureCaps

    @classmethod
    def of(cls, config: RuntimeConfig, profile: ModelProfile) -> Limits:
        """The config's caps; what the model's profile says about dispatch (one request at a time, read-through)."""
        dispatch = config.dispatch_options(concurrent_calls=profile.concurrent_calls,
                                           read_through=profile.uses(Strategy.READ_THROUGH))
        return cls(dispatch, Budget.of(config), FailureCaps(config.max_consecutive_errors, config.loop_window))
