"""The Supervisor: runs every task's state machine as a coroutine, records it durably, serves live events.

``SupervisorCore`` is plain async Python (tested in-process with ``LocalRuntime``); ``agents.cluster.actors``
wraps it in one async Ray actor with ``max_restarts``. After a restart it re-attaches to every task
the store says is still running.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from agents.llm.profile import HOSTED, ModelProfile
from agents.checks.api import Check
from agents.config import RuntimeConfig
from agents.engine.cancel import CancelScope, reopen
from agents.engine.cancel_commands import CancelCommands
from agents.engine.submit_commands import SubmitCommands
from agents.engine.group_commit import group_commit
from agents.engine.lease_keeper import LeaseKeeper, lease_name, lease_runner
from agents.engine.loop_watch import LoopWatch, log_stall
from agents.engine.memory_link import MemoryLink
from agents.engine.otel_spans import live_spans
from agents.engine.runtime import Runtime
from agents.engine.sink import SinkHooks, StoreSink
from agents.engine.stops import Limits
from agents.engine.task_runner import TaskRunner, build_result
from agents.engine.task_state import TaskState
from agents.errors import TaskLeaseHeldError, TaskNotWaitingError, UnknownTaskError
from agents.events import AnyEvent, EscalatedPayload, parse_event
from agents.outputs import output_type_of
from agents.results import TaskResult
from agents.store import LeaseLostError, Store
from agents.store.batch import EventRow
from agents.task_text import check_text_length
from agents.tools.mcp import ToolRefresher

__all__ = ["SupervisorCore"]

log = logging.getLogger("tetrarch.supervisor")


_LIVE_LEASE_CHECKS, _LIVE_LEASE_PAUSE_S = 8, 0.25
"""How long ``resume`` waits for a live-looking lease to lapse before refusing it: 2 s."""


class SupervisorCore(SubmitCommands, CancelCommands):
    """Drives tasks. All methods are coroutines on one event loop; thousands of tasks run at once."""

    def __init__(self, store: Store, runtime: Runtime, config: RuntimeConfig,
                 clock: Callable[[], float] = time.time, *, reattach_first: bool = False,
                 checks: Sequence[Check] = (), owns: Callable[[str], bool] = lambda task_id: True,
                 refresher: ToolRefresher | None = None, lives_with_parent: bool = False,
                 profile: ModelProfile = HOSTED) -> None:
        self._store, self._rt, self._cfg, self._clock = store, runtime, config, clock
        self._refresher = refresher
        """Re-lists the MCP servers whose tool lists changed before a task starts or continues (None: no server)."""
        self._profile, self._limits = profile, Limits.of(config, profile)
        """The model's (``llm.profile``): whether its calls may run at once; all runs' caps (frozen)."""
        self._checks = tuple(checks)
        """The user's answer checks, given to every task this Supervisor runs."""
        self._owns = owns
        """Which tasks this Supervisor re-attaches to after a restart (one shard's, with several shards)."""
        self._running: dict[str, asyncio.Task[TaskResult]] = {}
        self._scopes: dict[str, CancelScope] = {}  # each running task's cancel switch (``cancel``)
        self._runs: dict[str, int] = {}
        self._results: dict[str, tuple[int, TaskResult]] = {}
        self._live: dict[str, list[tuple[int, str]]] = {}
        """A running task's durable events for live readers, as ``(seq, JSON text)``: text is nothing the
        cyclic GC walks, where the event objects were ~40 per task in flight (each full pass walked them)."""
        # Waiters hold the current event; a change sets it and puts a fresh one in its place. Synchronous:
        # nothing is scheduled to wake them (a notification must not be a task nobody awaits).
        self._changed = asyncio.Event()
        self._needs_reattach = reattach_first
        """A restarted Supervisor (its actor was reconstructed) first resumes the tasks its predecessor ran."""
        self._reattach_lock = asyncio.Lock()
        self._owner = lease_name(lives_with_parent)
        """Names this Supervisor in the task leases it takes (``lives_with_parent``: a Ray worker, which its raylet
        started and outlives only as an orphan on its way out)."""
        self._memory = MemoryLink(config)
        self._hooks = SinkHooks(self._on_rows, self._on_lost, self._redact_live)  # every run's sink tells it
        # fallback: a runtime_env may hold a callable (Ray's worker_process_setup_hook); the record shows its repr.
        self._config_json = config.model_dump(mode="json", fallback=repr)
        """What every task row records of the (frozen) config: dumped once, not per submitted task."""
        self._leases: LeaseKeeper | None = None
        """Renews the leases of the tasks this Supervisor runs, so another's ``resume`` sees them live."""
        self._loop_watch: LoopWatch | None = None
        """Logs where this loop was when it stopped turning (every step's bound is a timer on it); started by the
        first command, on the loop that runs the tasks."""

    @property
    def lease_owner(self) -> str:
        """The name this Supervisor's task leases carry."""
        return self._owner

    async def _ready(self) -> None:
        if self._loop_watch is None:
            self._loop_watch = LoopWatch(report=lambda stall: log_stall(stall, "the Supervisor's event loop")).start()
            self._leases = LeaseKeeper(self._store, self._owner, lambda: list(self._running),
                                       on_lost=self._lease_taken).start()
        if not self._needs_reattach:
            return
        async with self._reattach_lock:
            if self._needs_reattach:
                self._needs_reattach = False
                ids = await self.reattach()
                log.warning("supervisor restarted; re-attached %d unfinished task(s)", len(ids))

    async def _current_tools(self) -> None:
        if self._refresher is not None:
            await self._refresher.current()

    # ------------------------------------------------------------------ commands
    async def respond(self, task_id: str, text: str, by: str | None = None) -> int:
        """Answer the task's escalation with ``text``; the answer and ``by`` (who gave it) go into the event log
        before the task continues."""
        check_text_length(text, "response")  # every caller's bound (web view, MCP, API), not only the driver's
        await self._ready()
        await self._current_tools()
        if self._is_running(task_id):
            raise TaskNotWaitingError(task_id, "running")
        state = self._load(task_id)
        if state.escalation is None:
            raise TaskNotWaitingError(task_id, state.status or state.phase)
        _rebuild_output_type(state)
        # Take the task over first, then read it: nothing an older runner writes afterwards is accepted.
        generation = self._store.acquire_lease(task_id, self._owner)
        state = self._load(task_id)
        state.human_response = text
        esc = state.escalation
        answered = None if esc is None else EscalatedPayload(
            reason=esc.reason, question=esc.question, kind=esc.kind, step_id=esc.step_id, answer=text,
            answered_by=by or "api")
        return self._continue(state, generation, first=answered)

    async def resume(self, task_id: str, force: bool = False) -> int:
        """Continue an unfinished task from its checkpoint (no-op if it is running here already). A task another
        live runner holds is refused (``TaskLeaseHeldError``) unless ``force``."""
        await self._ready()
        if self._is_running(task_id):
            return self._runs[task_id]
        loaded = self._load(task_id)  # an unknown task raises here, before any lease is taken
        _rebuild_output_type(loaded)
        if not force and loaded.phase not in ("done", "waiting"):
            await self._refuse_live_lease(task_id)
        # Take the task over first, then read it: a stale runner (a killed driver's workers, the Supervisor
        # this one replaces) can write nothing after this point, so the state read is the last one.
        generation = self._store.acquire_lease(task_id, self._owner)
        state = self._load(task_id)
        if state.phase in ("done", "waiting") and not reopen(state):  # a cancelled one continues where it was
            result = self._store.get_result(task_id) or self._rebuilt_result(state, generation)
            self._results[task_id] = (state.run, result)
            self._runs[task_id] = state.run
            return state.run
        return self._continue(state, generation)

    async def _refuse_live_lease(self, task_id: str) -> None:
        """Raise ``TaskLeaseHeldError`` while another live runner holds the task. A killed driver's runner lives
        on for about a second (Ray kills its workers, the driver watch revokes its leases): that long is waited
        out, so a resume right after a crash is not refused."""
        for check in range(_LIVE_LEASE_CHECKS):
            held = lease_runner(self._store.lease_holder(task_id), me=self._owner, now=self._clock())
            if held is None:
                return
            if check == _LIVE_LEASE_CHECKS - 1:
                raise TaskLeaseHeldError(task_id, held.owner, held.until)
            await asyncio.sleep(_LIVE_LEASE_PAUSE_S)

    def _rebuilt_result(self, state: TaskState, generation: int) -> TaskResult:
        """The result of a task that finished but died before its result was stored: from the checkpoint and the
        stored outputs (stored now, so the next reader finds it)."""
        outputs = {sid: out for (_, sid), out in self._store.get_step_outputs(state.task_id, state.plan_version).items()}
        result = build_result(state, outputs)
        self._store.finish_task(state.task_id, result, generation=generation)
        return result

    async def reattach(self) -> list[str]:
        """Resume every task the store says is still running (after a Supervisor or driver crash)."""
        self._needs_reattach = False
        ids = [t for t in self._store.unfinished_task_ids() if self._owns(t) and not self._is_running(t)]
        for task_id in ids:
            try:
                await self.resume(task_id, force=True)  # its runner was this shard's predecessor, which is gone
            except Exception:  # one unreadable task must not block the others
                log.exception("could not re-attach task %s", task_id)
        return ids

    # ------------------------------------------------------------------ queries
    async def wait_events(self, task_id: str, after_seq: int = 0, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        """Events with seq > after_seq; waits up to timeout_s for the first new one."""
        await self._ready()
        deadline = self._clock() + timeout_s
        while True:
            changed = self._changed
            events = self._events_after(task_id, after_seq)
            remaining = deadline - self._clock()
            if events or remaining <= 0:
                return [e.model_dump(mode="json") for e in events]
            await self._wait_change(changed, remaining)

    async def wait_result(self, task_id: str, run: int = 1, timeout_s: float = 10.0) -> dict[str, Any] | None:
        """The result of run ``run`` (or a later one), or None when not finished within timeout_s."""
        await self._ready()
        deadline = self._clock() + timeout_s
        while True:
            changed = self._changed
            got = self._results.get(task_id)
            if got is None and not self._is_running(task_id):
                stored = self._store.get_result(task_id)
                if stored is None and self._store.get_task(task_id) is None:
                    raise UnknownTaskError(task_id)
                if stored is not None:
                    got = (self._runs.get(task_id, run), stored)
            if got is not None and got[0] >= run:
                return got[1].model_dump(mode="json")
            remaining = deadline - self._clock()
            if remaining <= 0:
                return None
            await self._wait_change(changed, remaining)

    async def current_run(self, task_id: str) -> int:
        await self._ready()
        return self._runs.get(task_id) or self._load(task_id).run

    async def running_tasks(self) -> list[str]:
        return sorted(self._running)

    async def shutdown(self) -> None:
        if self._loop_watch is not None:
            self._loop_watch.stop()
        for task in list(self._running.values()):
            task.cancel()
        await asyncio.gather(*self._running.values(), return_exceptions=True)
        group_commit(self._store, asyncio.get_running_loop()).commit()  # what waits for the end of this tick
        if self._leases is not None:
            await self._leases.stop()
        self._store.close()
        self._memory.close()

    # ------------------------------------------------------------------ internals
    def _sink(self, task_id: str, generation: int, *, new: bool = False) -> StoreSink:
        """The sink of a run; ``new``: the task was created just now, so it has no events yet."""
        return StoreSink(self._store, task_id, self._hooks, self._clock, generation=generation,
                         last_seq=0 if new else None)

    def _redact_live(self, task_id: str) -> None:
        """A secret became known: the events kept for live readers are served redacted from now on too."""
        live = self._live.get(task_id)
        if live:
            self._live[task_id] = [(seq, json.dumps(self._store.redact(json.loads(body)), ensure_ascii=False))
                                   for seq, body in live]

    def _on_lost(self, task_id: str, exc: Exception) -> None:
        """This runner may no longer write the task (another took it over, or the store refused): stop it."""
        if isinstance(exc, LeaseLostError):
            log.warning("task %s: %s", task_id, exc)
        else:
            log.error("task %s: the store refused a write, the runner stops (%s: %s); resume the task with "
                      "orch.resume(task_id)", task_id, type(exc).__name__, exc)
        self._stop_run(task_id)

    def _on_rows(self, task_id: str, rows: list[EventRow]) -> None:
        self._live.setdefault(task_id, []).extend((row[1], row[4]) for row in rows)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @staticmethod
    async def _wait_change(changed: asyncio.Event, timeout_s: float) -> None:
        try:
            async with asyncio.timeout(timeout_s):
                await changed.wait()
        except TimeoutError:
            pass

    def _events_after(self, task_id: str, after_seq: int) -> list[AnyEvent]:
        live = self._live.get(task_id)
        if live and live[0][0] <= after_seq + 1:
            return [parse_event(body) for seq, body in live if seq > after_seq]
        return self._store.events(task_id, after_seq=after_seq)

    def _is_running(self, task_id: str) -> bool:
        """From ``_start`` until ``_on_done`` has recorded the run's result. Not the asyncio task's ``done()``: a
        run that ends without awaiting anything (an approved escalation is accepted at once) is done before its
        callback runs, and in between the store still held the run before (``wait_result`` returned the
        escalation right after the approval) and ``respond`` could start a run whose entry the callback removed."""
        return task_id in self._running

    def _load(self, task_id: str) -> TaskState:
        data = self._store.load_checkpoint(task_id)
        if data is None:
            raise UnknownTaskError(task_id)
        return TaskState.model_validate(data)

    def _continue(self, state: TaskState, generation: int, first: EscalatedPayload | None = None, *,
                  cancel_by: str | None = None) -> int:
        state.run += 1
        if state.phase != "waiting" and cancel_by is None:  # a run that records a cancel marks them cancelled
            # Steps that were running when the process died run again (write tools are journaled).
            for record in state.steps.values():
                if record.status == "running":
                    record.status = "pending"
            if state.phase == "reflect" and any(r.status == "failed" and r.error_kind == "executor_died"
                                                for r in state.steps.values()):
                # A dying driver's Supervisor outlives its executors for a moment (Ray kills a dead owner's actors
                # one by one) and records their loss as the steps' failure. That says nothing about the steps:
                # they run again (``restore`` makes every step not completed pending) instead of being judged.
                state.phase = "execute"
        self._results.pop(state.task_id, None)
        self._start(state, self._sink(state.task_id, generation), first)
        if cancel_by is not None:
            self._scopes[state.task_id].request(cancel_by)
        return state.run

    def _start(self, state: TaskState, sink: StoreSink, first: EscalatedPayload | None = None) -> None:
        """Run the task; ``first``, the human's answer that continues it, is the run's first event."""
        seen = self._cfg.observability
        traced, close_spans = live_spans(sink, state, enabled=seen.otel, content=seen.otel_content,
                                         setup=seen.otel_setup)
        if first is not None:
            traced.emit(first)
        runner = TaskRunner(state, config=self._cfg, runtime=self._rt, sink=traced, clock=self._clock,
                            memory=self._memory, checks=self._checks, profile=self._profile,
                            limits=self._limits)
        self._runs[state.task_id] = state.run
        self._scopes[state.task_id] = runner.cancel_scope
        task = asyncio.ensure_future(runner.run())
        self._running[state.task_id] = task
        if close_spans is not None:
            task.add_done_callback(close_spans)
        task.add_done_callback(lambda t, s=state, k=sink: self._on_done(s, k, t))

    def _on_done(self, state: TaskState, sink: StoreSink, task: asyncio.Task[TaskResult]) -> None:
        writing = False
        try:
            writing = self._record(state, sink, task)
        finally:  # whatever recording raised, the run is over: it must not look running forever
            if not writing:
                self._end_run(state.task_id, task)

    def _end_run(self, task_id: str, task: asyncio.Task[TaskResult]) -> None:
        if self._running.get(task_id) is task:
            self._running.pop(task_id, None)
            self._scopes.pop(task_id, None)
            # Every event it served is durable (published only once written): later readers get them from
            # the store. Kept, they were ~50 objects per task for the life of the process, walked by every
            # full GC pass.
            self._live.pop(task_id, None)
        self._notify()

    def _record(self, state: TaskState, sink: StoreSink, task: asyncio.Task[TaskResult]) -> bool:
        """Hand the run's result to the sink, to be written with its last batch; True when ``_recorded`` ends the
        run once it is written (the run looks running until then, so nothing resumes it in between)."""
        if task.cancelled() or sink.lost is not None:
            # Shutdown: the checkpoint says "running", so the next Supervisor resumes it. Lost: another runner
            # owns the task and writes its result.
            return False
        result = task.result()
        try:
            # What the caller gets is what the store keeps: a secret a tool output echoed is redacted in both.
            row, result = self._store.result_row(state.task_id, result)
        except Exception:  # the result still reaches the caller from memory
            log.exception("could not store the result of task %s", state.task_id)
            sink.flush()
            self._keep_result(state, result)
            return False
        sink.finish(row, lambda error: self._recorded(state, task, result, error, sink.generation))
        return True

    def _recorded(self, state: TaskState, task: asyncio.Task[TaskResult], result: TaskResult,
                  error: Exception | None, generation: int) -> None:
        try:
            if isinstance(error, LeaseLostError):
                return  # another runner owns the task now and writes its own result
            if error is not None:  # the result still reaches the caller from memory
                log.error("could not store the result of task %s (%s: %s)", state.task_id, type(error).__name__,
                          error)
            elif result.status == "cancelled":
                self._fence_cancelled(state.task_id, generation, result.cancelled_by)
            self._keep_result(state, result)
        finally:
            self._end_run(state.task_id, task)

    def _keep_result(self, state: TaskState, result: TaskResult) -> None:
        if state.session_id is not None:
            self._memory.finish_turn(result)
        self._results[state.task_id] = (state.run, result)


def _rebuild_output_type(state: TaskState) -> None:
    """A task with an ``output_type`` continues only where its type can be rebuilt: ``OutputTypeError`` otherwise,
    before the task is taken over (a class defined inside a function, resumed from a new process)."""
    if state.output is not None:
        output_type_of(state.output)
