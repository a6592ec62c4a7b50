"""Typed errors of the pure core. Messages are written for two readers: the developer, and the
LLM that gets one repair round with ``str(error)``. Constructors have no side effects."""

from __future__ import annotations

__all__ = ["AnswerMissingError", "LLMOutputError", "PlanValidationError", "PlanningError"]


class PlanningError(Exception):
    """Base class of every error raised by ``planning``."""


class LLMOutputError(PlanningError):
    """A role's output could not be read as the JSON object its wire format requires.

    ``str(err)`` is the message shown to the LLM in its repair round.
    """

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class AnswerMissingError(LLMOutputError):
    """An accept that gives no answer for the user (the terse form's answer line is missing): its own type, so a
    typed review can tell it from a malformed reply and treat it as an output that is not there."""


class PlanValidationError(PlanningError):
    """A plan that parsed but makes no sense: ``problems`` lists every one found.

    ``str(err)`` is a short list meant for the planner's repair round.
    """

    def __init__(self, problems: tuple[object, ...]) -> None:
        self.problems = problems
        lines = "\n".join(f"- {getattr(p, 'message', p)}" for p in problems)
        super().__init__(f"The plan is invalid:\n{lines}\nReturn the corrected complete plan.")

    def __reduce__(self) -> tuple[type[PlanValidationError], tuple[tuple[object, ...]]]:
        # Rebuilt from its problems: the default would pass the message back as ``problems`` (split into letters).
        return type(self), (self.problems,)
