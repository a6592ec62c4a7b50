"""Typed tool errors. The class decides what happens next, so a tool author raises the right one:

- ``ToolArgumentError``  — the arguments are wrong; the executor gives the LLM one repair round.
- ``TransientToolError`` — worth retrying (rate limit, flaky network); retried with backoff + jitter.
- ``ToolTimeoutError``   — the call exceeded its timeout (a transient error).
- ``PermanentToolError`` — retrying will not help; reported to the reflector, which may replan.
- ``UnknownToolError``, ``ToolPermissionError`` — the plan asked for something it may not do.
- ``ToolDefinitionError`` — a developer mistake found when ``@tool`` decorates the function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from agents.errors import TetrarchError

__all__ = [
    "PermanentToolError",
    "ToolArgumentError",
    "ToolDefinitionError",
    "ToolError",
    "ToolErrorKind",
    "ToolPermissionError",
    "ToolTimeoutError",
    "TransientToolError",
    "UnknownToolError",
]

ToolErrorKind = Literal["argument", "transient", "permanent", "timeout", "unknown_tool", "permission", "definition"]


class ToolError(TetrarchError):
    """Base of every tool error. ``kind`` tells the runtime how to react; ``attempts`` how often it ran."""

    kind: ClassVar[ToolErrorKind] = "permanent"

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.tool_name = tool_name
        self.attempts = attempts


class ToolArgumentError(ToolError):
    """The arguments do not fit the tool's schema (or the tool rejected them). Fix the arguments.

    ``fix``: when the tool knows the right value (a near-miss name it can match), the arguments to replace.
    The executor then retries a read tool with them at once, without a model call; write tools are never
    rewritten this way (their repair goes through the model, or a human approved the exact call).

        >>> ToolArgumentError("unknown entity 'Dalwynbrx'; did you mean 'Dalwynbre'?",
        ...                   fix={"entity": "Dalwynbre"}).fix
        {'entity': 'Dalwynbre'}
    """

    kind: ClassVar[ToolErrorKind] = "argument"

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0,
                 fix: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, tool_name=tool_name, attempts=attempts)
        self.fix = dict(fix) if fix else None


class TransientToolError(ToolError):
    """A failure that may go away on retry. ``retry_after`` (seconds) is honoured when set."""

    kind: ClassVar[ToolErrorKind] = "transient"

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0,
                 retry_after: float | None = None) -> None:
        super().__init__(message, tool_name=tool_name, attempts=attempts)
        self.retry_after = retry_after


class ToolTimeoutError(TransientToolError):
    """The call did not finish within its timeout."""

    kind: ClassVar[ToolErrorKind] = "timeout"


class PermanentToolError(ToolError):
    """Retrying the same call will not help; the reflector decides (replan, escalate)."""

    kind: ClassVar[ToolErrorKind] = "permanent"


class UnknownToolError(ToolError):
    """The name is not in the registry; the message lists the tools that exist."""

    kind: ClassVar[ToolErrorKind] = "unknown_tool"

    def __init__(self, name: str, available: Sequence[str], suggestion: str | None = None) -> None:
        hint = f" Did you mean {suggestion!r}?" if suggestion else ""
        listing = ", ".join(sorted(available)) or "(none registered)"
        super().__init__(f"unknown tool {name!r}; available: {listing}.{hint}", tool_name=name)
        self.available = tuple(sorted(available))


class ToolPermissionError(ToolError):
    """A write/admin tool that requires confirmation was called without it."""

    kind: ClassVar[ToolErrorKind] = "permission"


class ToolDefinitionError(ToolError):
    """``@tool`` cannot describe this function to an LLM; the message names what to change."""

    kind: ClassVar[ToolErrorKind] = "definition"
