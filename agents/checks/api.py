"""The user's answer checks: what a check receives, how it refuses, and what a refusal leaves in the record.

A check is a plain function (sync or async) that takes an ``AnswerReview`` and returns nothing to pass or raises
``Reject`` to refuse. It runs after the reviewer proposes to accept and before the accept counts, like
pydantic-ai's output validators or the Agents SDK's output guardrails: the domain rules stay the user's.

Example:
    >>> from agents.checks import AnswerReview, Reject
    >>> def names_rome(review: AnswerReview) -> None:
    ...     if "Rome" not in (review.answer or ""):
    ...         raise Reject("the answer must name Rome")
    >>> names_rome(AnswerReview(task="Which is bigger?", answer="Rome, by 0.7 million"))
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planning.models import Reflection

__all__ = ["Reject", "ReviewedStep", "AnswerReview", "Check", "CheckFinding", "CheckedReflection"]


class Reject(Exception):
    """Raised by a check to refuse the proposed answer. The message says what is wrong; the reviewer's accept
    then becomes a second review or a replan (an escalation once the replans are spent), and the message is
    shown to the reviewer and the planner, in the ``reflected`` event and in ``result.reflections``.

    Example:
        >>> raise Reject("the answer must give the difference in millions")  # doctest: +SKIP
    """

    @property
    def reason(self) -> str:
        return str(self.args[0]) if self.args else "rejected by a check"


class ReviewedStep(BaseModel):
    """One step of the reviewed plan: its call and what came of it."""

    model_config = ConfigDict(frozen=True)

    step_id: int
    description: str = ""
    tool_name: str | None = None
    """None for a reasoning step the executor answered with one model call."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The arguments the tool was called with (``$step_N_result`` references resolved)."""
    status: str = "completed"
    output: Any = None
    """The tool's output (None unless the step completed)."""
    error: str | None = None


class AnswerReview(BaseModel):
    """What a check sees: the task, the answer the reviewer proposes, and every step of the plan it reviewed."""

    model_config = ConfigDict(frozen=True)

    task: str
    answer: str | None = None
    output: Any = None
    """With ``output_type=``: the answer validated as that type (``result.output`` if the accept counts)."""
    steps: tuple[ReviewedStep, ...] = ()

    def step(self, step_id: int) -> ReviewedStep:
        """The step with this id (``KeyError`` if the plan has none)."""
        for s in self.steps:
            if s.step_id == step_id:
                return s
        raise KeyError(f"the reviewed plan has no step {step_id}")


Check: TypeAlias = Callable[[AnswerReview], "None | Awaitable[None]"]
"""A user's check: called with the review; returns (or resolves to) None to pass, raises ``Reject`` to refuse."""


class CheckFinding(BaseModel):
    """What one check held against a proposed answer."""

    model_config = ConfigDict(frozen=True)

    check: str
    """The user's check by its function name, or the built-in set that found it."""
    source: Literal["user", "builtin"]
    message: str
    kind: Literal["refusal", "ask_again"] = "refusal"
    """"refusal": the accept did not count (a user's ``Reject``, a built-in veto). "ask_again": code found nothing
    wrong but asked the reviewer once more (a hint: its next verdict counts, whatever it says); ``message`` is what
    the reviewer was told."""


class CheckedReflection(Reflection):
    """A review as the task keeps it: the reviewer's verdict (the wire ``Reflection``, unchanged) and what code's
    checks held against its answer. Only code fills ``checks``: the reviewer's reply is parsed as ``Reflection``,
    whose schema has no such field."""

    checks: tuple[CheckFinding, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _from_reflection(cls, data: Any) -> Any:
        # A plain review (no check ran on it, or it predates checks in a stored checkpoint) is one with none.
        if isinstance(data, Reflection) and not isinstance(data, CheckedReflection):
            return data.model_dump()
        return data
