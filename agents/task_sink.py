"""Where a running task writes what happens: events (with checkpoints), step outputs and LLM call records.

The Supervisor's sink writes to the SQLite store and wakes live event readers; ``MemorySink`` keeps
everything in lists for tests and for the in-process runtime.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel

from agents.events import AnyEvent, make_event
from agents.task_state import TaskState

__all__ = ["TaskSink", "MemorySink"]


class TaskSink(Protocol):
    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None) -> AnyEvent:
        """Append one event; when ``checkpoint`` is given, store it in the same atomic commit."""

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None: ...

    def outputs(self, plan_version: int) -> dict[int, Any]:
        """Stored outputs of ``plan_version`` (latest attempt per step)."""

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None: ...


class MemorySink:
    def __init__(self, task_id: str, clock: Callable[[], float] = time.time, first_seq: int = 1) -> None:
        self.task_id = task_id
        self.events: list[AnyEvent] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.stored: dict[tuple[int, int], Any] = {}
        self.llm_calls: list[dict[str, Any]] = []
        self._clock = clock
        self._seq = first_seq - 1

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None) -> AnyEvent:
        self._seq += 1
        event = make_event(payload, task_id=self.task_id, seq=self._seq, ts=self._clock())  # type: ignore[arg-type]
        self.events.append(event)
        if checkpoint is not None:
            self.checkpoints.append(checkpoint.model_dump(mode="json"))
        return event

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        self.stored[(plan_version, step_id)] = output

    def outputs(self, plan_version: int) -> dict[int, Any]:
        return {sid: out for (pv, sid), out in self.stored.items() if pv == plan_version}

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        self.llm_calls.extend(records)
