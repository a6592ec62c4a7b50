"""Typed errors of the pure core. Messages are written for two readers: the developer, and the
LLM that gets one repair round with ``str(error)``. Constructors have no side effects."""

from __future__ import annotations

__all__ = ["PlanningError", "LLMOutputError"]


class PlanningError(Exception):
    """Base class of every error raised by ``planning``."""


class LLMOutputError(PlanningError):
    """A role's output could not be read as the JSON object its wire format requires.

    ``str(err)`` is the message shown to the LLM in its repair round.
    """

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw
