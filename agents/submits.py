"""``Orchestrator.submit`` without a round trip per task: submits are queued and sent in bursts.

A submit used to wait for the Supervisor's answer before it returned: one actor call (or one hop to the
in-process loop and back) per task, so a caller submitting 1,000 tasks from one thread spent most of the run
waiting on round trips while the Supervisor had nothing else to do. Now ``submit`` queues the task and returns its
handle at once; one sender thread per Orchestrator sends whatever has queued up as one ``submit_many`` call per
Supervisor shard, waits for its answer, and sends the next burst. Alone a submit still goes at once (a burst of
one); under load the bursts grow by themselves, with no timer and no added wait.

What stays as it was: the tasks of one caller start in the order they were submitted; a task's handle and every
Orchestrator call about that task (``result``, ``events``, ``cancel``, ``respond``…) first wait until its submit
was answered, so none of them can reach the Supervisor before the task exists; a submit the Supervisor refused
raises its own typed error from those calls (and is logged when it happens, for a caller that never asks);
``shutdown`` sends what is queued before it stops the Supervisor. A session's turn is not queued (``submit``
there must refuse an unknown session at once).

Example:
    >>> sent = []
    >>> queue = SubmitQueue(lambda key, items: sent.append(items) or [None] * len(items), group=lambda t: 0)
    >>> done = queue.put("What is 2+2?", "t1", None)
    >>> queue.wait_for("t1", done)
    True
    >>> queue.close(); sent
    [[('What is 2+2?', 't1', None)]]
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from agents.errors import OrchestratorClosedError

__all__ = ["SubmitQueue", "Submitted", "submit_queue"]

log = logging.getLogger("tetrarch")

Submission = tuple[str, str, Any]
"""``(task, task_id, output spec)``: what the Supervisor's ``submit_many`` takes for one task."""

Send = Callable[[str, list[Submission]], Sequence[BaseException | None]]
"""Sends one shard's burst (routed by its first task id) and returns each task's error, None when it started."""


@dataclass(slots=True, eq=False)
class _Burst:
    """The submits of one shard sent in one call: one future for all of them (answered together), each one's
    error in its place. A future per task held a condition, its lock and a deque for the life of its handle:
    ~10 objects per task in flight, for the cyclic GC to walk."""

    done: Future[None] = field(default_factory=Future)
    errors: list[BaseException | None] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Submitted:
    """One queued submit (``SubmitQueue.put``): done when its burst was answered; its error if refused."""

    burst: _Burst
    index: int

    def done(self) -> bool:
        return self.burst.done.done()

    def error(self) -> BaseException | None:
        """Why the Supervisor refused the submit (None: started); only once ``done``."""
        return self.burst.errors[self.index]


class SubmitQueue:
    """The submits of one Orchestrator. ``group`` names the Supervisor shard a task id belongs to."""

    def __init__(self, send: Send, group: Callable[[str], Hashable], check: Callable[[], None] | None = None,
                 may_block: Callable[[], None] | None = None) -> None:
        self._send, self._group, self._check, self._may_block = send, group, check, may_block
        self._cond = threading.Condition()
        self._queue: dict[Hashable, tuple[_Burst, list[Submission]]] = {}
        """What the next send takes, by shard: insertion-ordered, as the shards' bursts were sent."""
        self._pending: dict[str, Submitted] = {}
        """Queued or in flight, by task id: what a call about that task waits for first."""
        self._thread: threading.Thread | None = None
        self._closed = False

    def put(self, task: str, task_id: str, output: Any) -> Submitted:
        """Queue one task; it is done when the Supervisor started it (or holds why it did not)."""
        if self._check is not None:
            self._check()  # a runtime that is gone refuses the submit now, as it always did
        shard = self._group(task_id)
        with self._cond:
            if self._closed:
                raise OrchestratorClosedError()
            burst, items = self._queue.get(shard) or self._queue.setdefault(shard, (_Burst(), []))
            done = Submitted(burst, len(items))
            items.append((task, task_id, output))
            burst.errors.append(None)
            self._pending[task_id] = done
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tetrarch-submits", daemon=True)
                self._thread.start()
            self._cond.notify()
        return done

    def wait_for(self, task_id: str, submitted: Submitted | None = None,
                 timeout: float | None = None) -> bool:
        """Return once ``task_id``'s submit was answered (at once for a task submitted earlier); raise its error
        if the Supervisor refused it. False if ``timeout`` seconds passed first (the submit is still on its way)."""
        done = submitted or self._pending.get(task_id)
        if done is not None:
            if not done.done() and self._may_block is not None:
                self._may_block()  # the in-process loop's own thread must not wait for what the loop is to do
            try:
                done.burst.done.result(timeout)
            except FutureTimeout:
                return False
            _raise_refusal(done)
        return True

    async def await_for(self, task_id: str, submitted: Submitted | None = None) -> None:
        """``wait_for`` from a caller's event loop, without blocking it."""
        done = submitted or self._pending.get(task_id)
        if done is not None:
            if not done.done():
                await asyncio.wrap_future(done.burst.done)
            _raise_refusal(done)

    def close(self, timeout: float = 30.0) -> None:
        """Send what is queued, wait for the answers (up to ``timeout``), and stop the sender; later submits
        raise ``OrchestratorClosedError``."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return
                shards, self._queue = self._queue, {}
            for burst, items in shards.values():
                self._send_burst(burst, items)

    def _send_burst(self, burst: _Burst, items: list[Submission]) -> None:
        try:
            errors = list(self._send(items[0][1], items))
        except BaseException as exc:  # noqa: BLE001 - the call itself failed: every task of it hears why
            errors = [exc] * len(items)
        for index, ((_, task_id, _), error) in enumerate(zip(items, errors)):
            if error is not None:
                burst.errors[index] = error
                log.warning("task %s was not started: %s: %s", task_id, type(error).__name__, error)
        with self._cond:
            for _, task_id, _ in items:
                self._pending.pop(task_id, None)
        burst.done.set_result(None)


def _raise_refusal(done: Submitted) -> None:
    error = done.error()
    if error is not None:
        raise error


def submit_queue(backend: Any, shards: int) -> SubmitQueue:
    """The queue of an Orchestrator's Supervisor ``backend`` (``call`` / optional ``check_alive``, as in
    ``agents.api``) with ``shards`` Supervisor shards."""
    from agents.cluster.shards import shard_of  # a hash of the id; it imports no Ray

    return SubmitQueue(lambda key, items: backend.call("submit_many", items, task_id=key),
                       group=lambda task_id: shard_of(task_id, shards), check=getattr(backend, "check_alive", None),
                       may_block=getattr(backend, "check_blocking", None))
