"""What the store hands back: task rows and summaries (pydantic, they leave the process) and journal records.

Example:
    >>> JournalRecord(key="k", task_id="t1", output=42, recorded_at=1.0).output
    42
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["STATUSES", "UNFINISHED", "JournalRecord", "StoreStatus", "TaskRow", "TaskSummary"]

StoreStatus = Literal["submitted", "running", "accepted", "escalated", "clarify", "refused", "failed",
                      "cancelled"]
"""A task's status in the store: the six final ``TaskStatus`` values plus the two unfinished ones."""
UNFINISHED: tuple[StoreStatus, ...] = ("submitted", "running")
STATUSES: tuple[str, ...] = StoreStatus.__args__  # type: ignore[attr-defined]


class TaskRow(BaseModel):
    """One task as stored (without its result: ``Store.get_result``)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task: str
    status: StoreStatus
    stopped_reason: str | None = None
    created_at: float
    updated_at: float
    config: dict[str, Any] = Field(default_factory=dict)
    """The RuntimeConfig the task was submitted with (secrets redacted)."""
    has_result: bool = False


class TaskSummary(BaseModel):
    """One line of ``tetrarch tasks``."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task: str
    status: StoreStatus
    created: float
    updated: float
    wall_s: float | None = None
    """From the stored result; None while the task is unfinished."""
    total_tokens: int | None = None
    """Input + output tokens over every LLM call, from the stored result."""


@dataclass(frozen=True, slots=True)
class JournalRecord:
    """A recorded side effect: the output of the tool call with idempotency key ``key``."""

    key: str
    task_id: str
    output: Any
    recorded_at: float
