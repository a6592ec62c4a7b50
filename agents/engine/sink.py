"""Where a running task writes what happens: events (with checkpoints), step outputs and LLM call records.

The Supervisor's sink writes to the SQLite store and wakes live event readers; ``MemorySink`` keeps
everything in lists for tests and for the in-process runtime.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel

from agents.engine.task_state import TaskState
from agents.events import AnyEvent, make_event, parse_event
from agents.llm.base import Spend
from agents.store import Store
from agents.store.redact import MIN_SECRET_LEN, Redactor
from agents.store.scrub import scrub_task

__all__ = ["MemorySink", "StoreSink", "TaskSink", "record_spend"]


class TaskSink(Protocol):
    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None) -> AnyEvent:
        """Append one event; when ``checkpoint`` is given, store it in the same atomic commit."""

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None: ...

    def outputs(self, plan_version: int) -> dict[int, Any]:
        """Stored outputs of ``plan_version`` (latest attempt per step)."""

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None: ...

    def add_secret(self, value: str) -> None:
        """Redact ``value`` from every event, checkpoint, output and LLM record written from now on
        (values shorter than ``MIN_SECRET_LEN`` are ignored: they would shred ordinary text)."""


def record_spend(state: TaskState, sink: TaskSink, role: str, spend: Spend) -> None:
    """Book what a role's LLM calls cost: the calls into the sink's log, the usage into the task's state."""
    if spend.calls:
        sink.record_llm_calls(spend.calls)
    if spend.usage.llm_calls or spend.usage.total_tokens:
        state.usage = state.usage.add(role, spend.usage)


class MemorySink:
    def __init__(self, task_id: str, clock: Callable[[], float] = time.time, first_seq: int = 1) -> None:
        self.task_id = task_id
        self.events: list[AnyEvent] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.stored: dict[tuple[int, int], Any] = {}
        self.llm_calls: list[dict[str, Any]] = []
        self._clock = clock
        self._seq = first_seq - 1
        self._redactor = Redactor.build()

    def add_secret(self, value: str) -> None:
        if len(value) >= MIN_SECRET_LEN:
            self._redactor = self._redactor.with_secret(value)

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None) -> AnyEvent:
        self._seq += 1
        event = make_event(payload, task_id=self.task_id, seq=self._seq, ts=self._clock())  # type: ignore[arg-type]
        plain = event.model_dump(mode="json")
        redacted = self._redactor.redact(plain)
        if redacted != plain:
            event = parse_event(redacted)
        self.events.append(event)
        if checkpoint is not None:
            self.checkpoints.append(self._redactor.redact(checkpoint.model_dump(mode="json")))
        return event

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        # Kept as the live value (tests compare it); the store is where redaction of outputs is enforced.
        self.stored[(plan_version, step_id)] = output

    def outputs(self, plan_version: int) -> dict[int, Any]:
        return {sid: out for (pv, sid), out in self.stored.items() if pv == plan_version}

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        self.llm_calls.extend(self._redactor.redact(dict(r)) for r in records)


class StoreSink:
    """TaskSink over the SQLite store; also feeds live readers of ``wait_events``."""

    def __init__(self, store: Store, task_id: str, on_event: Callable[[AnyEvent], None],
                 clock: Callable[[], float] = time.time, on_secret: Callable[[], None] | None = None) -> None:
        self._store, self.task_id, self._on_event, self._clock = store, task_id, on_event, clock
        self._on_secret = on_secret
        self._seq = store.last_seq(task_id)

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None) -> AnyEvent:
        self._seq += 1
        event = make_event(payload, task_id=self.task_id, seq=self._seq, ts=self._clock())  # type: ignore[arg-type]
        status = None
        if checkpoint is not None:
            status = checkpoint.status if checkpoint.phase in ("done", "waiting") and checkpoint.status else "running"
        [event] = self._store.commit(self.task_id, [event],
                                     checkpoint,  # the model itself: encode serialises it once
                                     status=status)
        self._on_event(event)
        return event

    def add_secret(self, value: str) -> None:
        if len(value) < MIN_SECRET_LEN or self._store.redact(value) != value:
            return  # too short to redact, or redacted already (registered before, or a key shape)
        self._store.add_secret(value)
        # The task row, its first events and the router's call record were written before the plan named the
        # secret (usually given in the task text): rewrite them, and the live copies readers are served.
        scrub_task(self._store.path, self.task_id, [value])
        if self._on_secret is not None:
            self._on_secret()

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        self._store.put_step_output(self.task_id, plan_version, step_id, attempt, output)

    def outputs(self, plan_version: int) -> dict[int, Any]:
        return {sid: out for (_, sid), out in self._store.get_step_outputs(self.task_id, plan_version).items()}

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        for record in records:
            self._store.record_llm_call(self.task_id, record)
