"""How a task run ends: the stop the task runner raises inside its run, and the stop an error becomes."""

from __future__ import annotations

import logging

from agents.engine.task_state import Escalation
from agents.errors import BudgetExceeded, InvalidOutputError, RoleUnavailableError
from agents.events import StoppedReason, TaskStatus
from prompts.errors import PromptBudgetError

__all__ = ["TaskStop", "output_stop", "stop_for_error"]

log = logging.getLogger("tetrarch.task")


class TaskStop(Exception):
    """How the run ends; raised and caught inside the task runner only (its ``run`` turns it into the result)."""

    def __init__(self, status: TaskStatus, reason: StoppedReason, *, error: str | None = None,
                 answer: str | None = None, question: str | None = None,
                 escalation: Escalation | None = None) -> None:
        super().__init__(error or reason)
        self.status, self.reason, self.error = status, reason, error
        self.answer, self.question, self.escalation = answer, question, escalation


def stop_for_error(exc: Exception, task_id: str, task_timeout_s: float) -> TaskStop:
    """The failed stop an error that ended a run becomes: what went wrong and what the user can do."""
    match exc:
        case TaskStop():
            return exc
        case TimeoutError():
            return TaskStop("failed", "task_timeout", error=(
                f"the task did not finish within task_timeout_s={task_timeout_s:g}s; its progress is "
                "checkpointed: raise the timeout and call orch.resume(task_id)"))
        case BudgetExceeded():
            return TaskStop("failed", exc.cap, error=str(exc))
        case RoleUnavailableError():
            return TaskStop("failed", "role_unavailable", error=str(exc))
        case PromptBudgetError():  # the task (or what it grew into) does not fit a prompt: resume cannot help
            return TaskStop("failed", "prompt_too_long", error=(
                f"{exc}. The task cannot continue as it is: submit a shorter task, or a new Orchestrator with a "
                "larger RuntimeConfig.context_token_budget"))
        case _:
            log.exception("task %s crashed", task_id, exc_info=exc)
            return TaskStop("failed", "internal_error", error=(
                f"internal error ({type(exc).__name__}: {exc}); the task is checkpointed and can be resumed with "
                "orch.resume(task_id) — please report this bug"))


def output_stop(exc: InvalidOutputError) -> TaskStop:
    """The escalation of a reviewer whose answer stayed invalid as the task's ``output_type``: the question
    names the field, and a human's reply (``orch.respond``) is the reviewer's feedback for another try."""
    reason = f"the answer did not match the task's output_type, also after one repair: {exc.error}"
    question = f"{reason}. Reply with guidance (e.g. what that field should hold) to try again."
    return TaskStop("escalated", "invalid_output", question=question,
                    escalation=Escalation(kind="reflector", reason=reason, question=question))
