"""The planner's repair round: what it is told about its first reply, and which tools it may use.

Kept apart from the streaming in ``agents.roles.planner``: the first round's question about calls that ignore the
task (``planning.blind_calls``, ``Strategy.BLIND_CALLS``) and the note a problem of sense becomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agents.checks.numbers import numbers_in
from agents.roles.json_call import repair_messages
from agents.roles.messages import ReplanContext
from planning.blind_calls import blind_call
from planning.errors import PlanningError, PlanValidationError
from planning.models import PlanStep
from planning.validate import PlanProblem, ProblemCode
from prompts.registry import ReplyForm

__all__ = ["BlindCheck", "RepairRound", "repair_round"]


class BlindCheck:
    """The first round's question about a call whose result cannot depend on the task (``planning.blind_calls``)."""

    def __init__(self, task: str, entries: Mapping[str, str]) -> None:
        self._task = task
        self.entries = entries
        """Each tool's catalog lines (``catalog_entries``)."""
        self._figures = frozenset(numbers_in(task))
        self.copied_from: set[str] = set()
        """Tools whose documented example the reply copied: the repair round's catalog leaves their examples out."""

    def refuse(self, step: PlanStep) -> None:
        if step.tool_name is None:
            return
        found = blind_call(step, self.entries.get(step.tool_name, ""), self._task, task_figures=self._figures)
        if found is not None:
            if found.copied:
                self.copied_from.add(step.tool_name)
            raise PlanValidationError((PlanProblem(ProblemCode.BLIND_CALL, found.reason, step.step_id),))


_NOTED = frozenset({ProblemCode.BLIND_CALL, ProblemCode.REJECTED_CALL})
"""Problems of a plan's sense, not its form: the repair round asks afresh with the problem as a note, because a
small model shown its own reply as the previous turn copies it (the call it was told not to make included)."""


class RepairRound(Protocol):
    """What the repair round needs from the first: the tools refused for rejected calls, and the blind check."""

    refused_tools: set[str]
    blind: BlindCheck | None


def repair_round(messages: list[dict[str, Any]], raw: str, exc: PlanningError, form: ReplyForm,
                 round_: RepairRound, replan: ReplanContext | None, schemas: dict[str, dict[str, Any]]
                 ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The repair round's conversation and the tools its reply may use (``round_.refused_tools`` left out, unless
    a step of the previous plan completed with one: the new plan may need it again)."""
    problems = exc.problems if isinstance(exc, PlanValidationError) else ()
    if not problems or not all(isinstance(p, PlanProblem) and p.code in _NOTED for p in problems):
        return repair_messages(messages, raw, str(exc), form), schemas
    *head, last = messages
    lines = [f"- {getattr(p, 'message', p)}" for p in problems]
    note = "\n".join(lines)
    convo = [*head, {**last, "content": f"{last['content']}\n\nNote, from checking an earlier attempt:\n{note}"}]
    worked = {v.tool_name for v in replan.results if v.status == "completed"} if replan is not None else set()
    banned = round_.refused_tools - worked
    offered = {name: schema for name, schema in schemas.items() if name not in banned}
    return convo, offered or schemas

