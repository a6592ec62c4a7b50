"""``TaskHandle``: one submitted task, as the caller holds it (``agents.api`` makes them).

Every call about the task first waits for its queued submit (``agents.submits``); results are read in batches with
the Orchestrator's other handles' (``agents.result_reads``); the answer and a typed output stream off its events
(``agents.answer_stream``, ``agents.output_stream``).

Example:
    >>> handle = orch.submit("Which is bigger, Paris or Rome?")                # doctest: +SKIP
    >>> handle.result(timeout=120).status                                      # doctest: +SKIP
    'accepted'
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

from agents.errors import InvalidTimeoutError, TaskTimeoutError, UsageError, short_repr
from agents.events import AnyEvent, parse_event
from agents.output_stream import StreamsOutput
from agents.outputs import typed_result
from agents.results import CancelOutcome, TaskResult
from agents.submits import Submitted


class Orchestrator(Protocol):
    """What a handle uses of the ``agents.api.Orchestrator`` that made it (named here: the API imports this module)."""

    _submits: Any
    _reads: Any
    _backend: Any

    def _check(self) -> None: ...

    def cancel(self, task_id: str, *, by: str | None = None) -> CancelOutcome: ...

__all__ = ["TaskHandle"]

_POLL_S = 5.0


class TaskHandle(StreamsOutput):
    """A submitted task. ``events()`` streams its typed events live; ``result()`` waits for its result."""

    def __init__(self, orchestrator: Orchestrator, task_id: str, run: int = 1, output_type: Any = None, *,
                 submitted: Submitted | None = None) -> None:
        self._orch = orchestrator
        self.task_id = task_id
        self.run = run
        self._output_type = output_type
        self._submitted = submitted  # its queued submit (agents.submits): every call waits for it first

    def __repr__(self) -> str:
        return f"TaskHandle(task_id={self.task_id!r}, run={self.run})"

    def _call(self, method: str, *args: Any) -> Any:
        self._orch._check()  # after shutdown() its actors are gone: say so, not Ray's ActorDiedError
        self._orch._submits.wait_for(self.task_id, self._submitted)
        return self._orch._backend.call(method, *args, task_id=self.task_id)

    async def _acall(self, method: str, *args: Any) -> Any:
        self._orch._check()
        await self._orch._submits.await_for(self.task_id, self._submitted)
        return await self._orch._backend.acall(method, *args, task_id=self.task_id)

    def events(self, after_seq: int = 0) -> Iterator[AnyEvent]:
        """Every event of this task from ``after_seq`` on, live, until this run's ``task_finished``."""
        seq = after_seq
        while True:
            batch = self._call("wait_events", self.task_id, seq, _POLL_S)
            for data in batch:
                event = parse_event(data)
                seq = event.seq
                yield event
                if event.type == "task_finished" and self._is_final(event):
                    return

    async def aevents(self, after_seq: int = 0) -> AsyncIterator[AnyEvent]:
        seq = after_seq
        while True:
            batch = await self._acall("wait_events", self.task_id, seq, _POLL_S)
            for data in batch:
                event = parse_event(data)
                seq = event.seq
                yield event
                if event.type == "task_finished" and self._is_final(event):
                    return

    def _is_final(self, event: AnyEvent) -> bool:
        # A task continued by respond()/resume() has several task_finished events; the handle of run N
        # stops at the first one that is not older than its own run.
        current = self._call("current_run", self.task_id)
        return current <= self.run or event.payload.status != "escalated"  # type: ignore[union-attr]

    def result(self, timeout: float | None = None) -> TaskResult:
        """Wait for the result. Never raises for a task that failed (see ``result.error``); raises
        ``TaskTimeoutError`` if ``timeout`` seconds pass first (the task keeps running)."""
        deadline = _deadline(timeout)
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            self._orch._check()
            sent = self._orch._submits.wait_for(self.task_id, self._submitted, None if deadline is None else wait)
            data = self._orch._reads.wait(self.task_id, self.run, wait) if sent else None  # with others' (result_reads)
            if data is not None:
                return typed_result(TaskResult.model_validate(data), self._output_type)
            if deadline is not None and time.monotonic() >= deadline:
                raise TaskTimeoutError(f"task {self.task_id} did not finish within {timeout}s; it keeps running — "
                                       "call handle.result() again or orch.resume(task_id) later")

    async def aresult(self, timeout: float | None = None) -> TaskResult:
        deadline = _deadline(timeout)
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            data = await self._acall("wait_result", self.task_id, self.run, wait)
            if data is not None:
                return typed_result(TaskResult.model_validate(data), self._output_type)
            if deadline is not None and time.monotonic() >= deadline:
                raise TaskTimeoutError(f"task {self.task_id} did not finish within {timeout}s")

    def cancel(self, *, by: str | None = None) -> CancelOutcome:
        """``orch.cancel(task_id)`` for this task: stop it now, keeping its completed steps."""
        return self._orch.cancel(self.task_id, by=by)

    async def acancel(self, *, by: str | None = None) -> CancelOutcome:
        """``cancel()`` from a caller's event loop, without blocking it."""
        return CancelOutcome.model_validate(await self._acall("cancel", self.task_id, _who(by)))


def _deadline(timeout: object) -> float | None:
    """When a wait of ``timeout`` seconds ends (None: never); a timeout that is not seconds is refused here, not
    as a TypeError from deep inside the wait."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout) or timeout < 0:
        raise InvalidTimeoutError(repr(timeout))
    return time.monotonic() + timeout


def _who(by: object) -> str:
    """Who cancels, as the result will name them."""
    if by is not None and (not isinstance(by, str) or not by.strip()):
        raise UsageError(f"cancel(by=...) names who cancels, as text (e.g. by='the chat UI'), got "
                         f"{type(by).__name__} {short_repr(by)}")
    return "the API" if by is None else by.strip()
