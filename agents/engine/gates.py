"""Which tool calls wait (for a human, or for the whole plan), and what counts as a human's approval."""

from __future__ import annotations

from agents.tools import ToolSpec

__all__ = ["has_side_effects", "is_approval", "needs_confirmation"]

_APPROVALS = frozenset({"approve", "approved", "yes", "y", "ok", "accept", "confirm", "confirmed", "go", "proceed"})


def needs_confirmation(spec: ToolSpec | None, plan_version: int, confirm_replanned_writes: bool = True) -> bool:
    """Whether a step of this tool waits for a human's approval before it runs: a ``requires_confirmation``
    tool always; any write/admin tool in a plan made after the planner saw tool output (every replan: tool
    output is untrusted and may be an injected instruction), unless the deployment opted out."""
    if spec is None:
        return False
    return spec.requires_confirmation or (confirm_replanned_writes and plan_version > 1 and spec.permission != "read")


def has_side_effects(spec: ToolSpec | None) -> bool:
    """Whether a step of this tool is a call the idempotency journal must key: such a call waits until a
    streamed plan is whole (the plan may still be rejected and replaced)."""
    return spec is not None and not spec.idempotent


def is_approval(text: str) -> bool:
    return text.strip().lower().rstrip(".!") in _APPROVALS
