"""Where a running task writes what happens: events (with checkpoints), step outputs and LLM call records.

The Supervisor's sink writes to the SQLite store and wakes live event readers; ``MemorySink`` keeps
everything in lists for tests and for the in-process runtime.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from agents.engine.group_commit import GroupCommit, group_commit
from agents.engine.task_state import TaskState
from agents.events import AnyEvent, make_event, parse_event
from agents.llm.base import Spend
from agents.store import Store, TaskBatch
from agents.store.batch import EventRow, ResultRow, merge_deltas
from agents.store.redact import MIN_SECRET_LEN, Redactor

__all__ = ["MemorySink", "SinkHooks", "StoreSink", "TaskSink", "record_spend"]


class TaskSink(Protocol):
    generation: int
    """The task lease generation this sink writes under (0: unfenced); executors claim write tools with it."""

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None,
             delta: dict[str, Any] | None = None) -> AnyEvent:
        """Append one event; when ``checkpoint`` (the whole state) or ``delta`` (what changed since the last
        write) is given, store it in the same atomic commit."""

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None: ...

    def outputs(self, plan_version: int) -> dict[int, Any]:
        """Stored outputs of ``plan_version`` (latest attempt per step)."""

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None: ...

    def add_secret(self, value: str) -> None:
        """Redact ``value`` from every event, checkpoint, output and LLM record written from now on
        (values shorter than ``MIN_SECRET_LEN`` are ignored: they would shred ordinary text)."""


@dataclass(frozen=True, slots=True)
class SinkHooks:
    """What many ``StoreSink``s tell the one who runs their tasks (the Supervisor), with the task id: one
    object serves every sink, where three closures per sink (~8 objects per task in flight) were walked by the
    cyclic GC. Durable events reach it as their stored rows (``EventRow``: the body is JSON text)."""

    durable: Callable[[str, list[EventRow]], None]
    lost: Callable[[str, Exception], None]
    """The sink stopped writing: another runner owns the task, or the store refused a write."""
    secret_added: Callable[[str], None]
    """A secret became known and what the task had written was scrubbed."""


def record_spend(state: TaskState, sink: TaskSink, role: str, spend: Spend,
                 cost_usd: float | None = None) -> None:
    """Book what a role's LLM calls cost: the calls into the sink's log, the usage (and ``cost_usd``, their
    price with ``RuntimeConfig.prices``) into the task's state."""
    if spend.calls:
        sink.record_llm_calls(spend.calls)
    if spend.usage.llm_calls or spend.usage.total_tokens:
        state.usage = state.usage.add(role, spend.usage, cost_usd)


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
        self.generation = 0
        self.deltas: list[dict[str, Any]] = []

    def add_secret(self, value: str) -> None:
        if len(value) >= MIN_SECRET_LEN:
            self._redactor = self._redactor.with_secret(value)

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None,
             delta: dict[str, Any] | None = None) -> AnyEvent:
        self._seq += 1
        event = make_event(payload, task_id=self.task_id, seq=self._seq, ts=self._clock())  # type: ignore[arg-type]
        plain = event.model_dump(mode="json")
        redacted = self._redactor.redact(plain)
        if redacted != plain:
            event = parse_event(redacted)
        self.events.append(event)
        if checkpoint is not None:
            self.checkpoints.append(self._redactor.redact(checkpoint.model_dump(mode="json")))
        elif delta is not None:
            self.deltas.append(self._redactor.redact(delta))
        return event

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        # Kept as the live value (tests compare it); the store is where redaction of outputs is enforced.
        self.stored[(plan_version, step_id)] = output

    def outputs(self, plan_version: int) -> dict[int, Any]:
        return {sid: out for (pv, sid), out in self.stored.items() if pv == plan_version}

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        self.llm_calls.extend(self._redactor.redact(dict(r)) for r in records)


class StoreSink:
    """TaskSink over the SQLite store; also feeds live readers of ``wait_events``.

    Writes are coalesced: everything a runner emits in one event-loop tick (events, outputs, LLM records, the
    checkpoint or its deltas) is committed in one transaction at the end of the tick, fenced by the lease
    ``generation`` this runner holds. ``hooks`` hear each durable event as its stored row (the sink keeps no
    event objects until its commit; a reader that keeps rows holds text, which the cyclic GC does not walk).
    When another runner has taken the task over, the commit is refused whole, ``hooks.lost`` is told (the
    Supervisor cancels this runner) and every later ``emit`` raises ``LeaseLostError``.
    """

    def __init__(self, store: Store, task_id: str, hooks: SinkHooks, clock: Callable[[], float] = time.time, *,
                 generation: int | None = None, last_seq: int | None = None) -> None:
        self._store, self.task_id, self._owner, self._clock = store, task_id, hooks, clock
        self.generation = generation or 0
        # ``last_seq``: the caller knows it (0 for a task it has just created), so the store is not asked; a
        # wrong guess is refused by the store's sequence check (EventSequenceError), never written.
        self._seq = store.last_seq(task_id) if last_seq is None else last_seq
        self._generation = generation  # the batches': None writes unfenced
        self._batch: TaskBatch | None = None
        """This tick's writes, made by the first of them: a sink between ticks holds no batch (with its three
        lists, four objects per task in flight for the cyclic GC)."""
        self._on_result: Callable[[Exception | None], None] | None = None
        self._delta: tuple[int, dict[str, Any]] | None = None
        self._scheduled = False
        self._committer: GroupCommit | None = None
        """This sink's loop's committer, looked up once (a sink lives on the loop its runner runs on)."""
        self.lost: Exception | None = None
        """Why this sink stopped writing (another runner owns the task, or the store refused a write)."""

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None,
             delta: dict[str, Any] | None = None) -> AnyEvent:
        """Append one event; with ``checkpoint`` (the whole state) or ``delta`` (what changed since the last
        write; ``agents.store.batch``) in the same commit."""
        if self.lost is not None:
            raise self.lost
        self._seq += 1
        event = make_event(payload, task_id=self.task_id, seq=self._seq, ts=self._clock())  # type: ignore[arg-type]
        row, event = self._store.event_row(self.task_id, event)
        batch = self._open()
        batch.events.append(row)
        if checkpoint is not None:
            # A full checkpoint covers every delta before it.
            batch.checkpoint, self._delta = (self._seq, checkpoint), None
            batch.status = (checkpoint.status if checkpoint.phase in ("done", "waiting") and checkpoint.status
                            else "running")
        elif delta is not None:
            self._delta = (self._seq, delta if self._delta is None else merge_deltas(self._delta[1], delta))
        self._schedule()
        return event

    def add_secret(self, value: str) -> None:
        if len(value) < MIN_SECRET_LEN or self._store.redact(value) != value:
            return  # too short to redact, or redacted already (registered before, or a key shape)
        self.flush()  # the writes of this tick land first, then everything written so far is scrubbed
        self._store.add_secret(value)
        # The task row, its first events and the router's call record were written before the plan named the
        # secret (usually given in the task text): rewrite them, and the live copies readers are served.
        self._store.scrub(self.task_id, [value])
        self._owner.secret_added(self.task_id)

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        row = self._store.output_row(self.task_id, plan_version, step_id, attempt, output)
        self._open().outputs.append(row)
        self._schedule()

    def outputs(self, plan_version: int) -> dict[int, Any]:
        self.flush()
        return {sid: out for (_, sid), out in self._store.get_step_outputs(self.task_id, plan_version).items()}

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        if not records:
            return
        calls = self._open().llm_calls
        for record in records:
            role = str((record.get("role") if isinstance(record, dict) else getattr(record, "role", "")) or "")
            calls.append((role, record))
        self._schedule()

    def finish(self, result: ResultRow, on_written: Callable[[Exception | None], None]) -> None:
        """Write the run's result with its last batch, in the group commit of this tick (one transaction for every
        task that finished in it, not one each); ``on_written(error)`` once it is durable, or was refused."""
        if self.lost is not None:
            on_written(self.lost)
            return
        self._open().result, self._on_result = result, on_written
        self._schedule()

    def _open(self) -> TaskBatch:
        batch = self._batch
        if batch is None:
            batch = self._batch = TaskBatch(self.task_id, self._generation)
        return batch

    def _schedule(self) -> None:
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()  # no event loop (a plain caller): write at once
            return
        self._scheduled = True
        committer = self._committer
        if committer is None or not committer.serves(self._store, loop):
            committer = self._committer = group_commit(self._store, loop)
        committer.add(self)  # with every other task's batch of this tick

    def flush(self) -> None:
        """Commit what was emitted since the last flush, now (before reads; the end of each tick commits through
        ``agents.engine.group_commit`` instead)."""
        taken = self.take()
        if taken is None:
            return
        batch, after = taken
        try:
            self._store.write_batch(batch)
        except Exception as exc:  # noqa: BLE001 - reported to the runner's owner, which stops the runner
            self.written(after, exc)
            return
        self.written(after, None)

    def take(self) -> tuple[TaskBatch, _Taken] | None:
        """The batch emitted since the last write, with what to do once it is written (``GroupMember``); None if
        nothing waits."""
        self._scheduled = False
        if self.lost is not None:
            return None
        if self._batch is None and self._delta is None:
            return None
        batch, self._batch = self._open(), None
        after = _Taken(batch.events, self._on_result if batch.result else None)
        if self._delta is not None:
            batch.delta, self._delta = self._delta, None
        if after.on_result is not None:
            self._on_result = None
        return None if batch.empty() else (batch, after)

    def written(self, after: _Taken, error: Exception | None) -> None:
        """The batch is durable: live readers see its events. Or the store refused it: stop writing. Either way a
        result it carried is reported to ``finish``'s caller."""
        if error is not None:
            self.lost = error
            self._owner.lost(self.task_id, error)
        elif after.events:
            self._owner.durable(self.task_id, after.events)
        if after.on_result is not None:
            after.on_result(error)


@dataclass(frozen=True, slots=True)
class _Taken:
    """What a taken batch leaves to do after its commit: publish its events, report the result it carried."""

    events: list[EventRow]
    """The batch's events to publish, as their stored rows."""
    on_result: Callable[[Exception | None], None] | None
