"""The Supervisor's ``cancel`` command (``orch.cancel``), and what stops a run that another runner took over.

Mixed into ``SupervisorCore`` (which owns the state it uses); the run's side of a cancel is
``agents.engine.cancel``. A task this Supervisor runs is stopped through its run's ``CancelScope``. A task it
does not run (another process runs it, or nobody does since its runner died) is taken over first, which fences
that runner out (nothing it writes afterwards is stored, and its lease watch stops it within
``lease_keeper.WATCH_S``), and a run here records the cancel. Once a cancelled outcome is stored its run's
lease generation is revoked, so a call it started that answers late can claim and write nothing."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from agents.engine.cancel import MAX_BY_CHARS, CancelScope, already_over, from_the_log, outcome, superseded
from agents.results import TaskResult
from agents.store import Store

if TYPE_CHECKING:
    from agents.engine.task_state import TaskState

__all__ = ["CancelCommands"]

log = logging.getLogger("tetrarch.supervisor")


class CancelCommands:
    """``SupervisorCore``'s cancel command; the attributes and methods below are the core's."""

    _store: Store
    _owner: str
    _scopes: dict[str, CancelScope]
    _runs: dict[str, int]
    _running: dict[str, asyncio.Task[Any]]
    _live: dict[str, list[Any]]

    if TYPE_CHECKING:
        async def _ready(self) -> None: ...
        def _is_running(self, task_id: str) -> bool: ...
        def _load(self, task_id: str) -> TaskState: ...
        def _continue(self, state: TaskState, generation: int, first: Any = None, *,
                      cancel_by: str | None = None) -> int: ...
        async def wait_result(self, task_id: str, run: int = 1,
                              timeout_s: float = 10.0) -> dict[str, Any] | None: ...

    async def cancel(self, task_id: str, by: str = "the API") -> dict[str, Any]:
        """Stop the task where it is and return what that did (a ``CancelOutcome``, as JSON)."""
        await self._ready()
        by = by[:MAX_BY_CHARS]
        if self._is_running(task_id):
            requested = self._scopes[task_id].request(by)
        else:
            state = self._load(task_id)  # an unknown task raises here, before any lease is taken
            if (over := already_over(state)) is None:
                generation = self._store.acquire_lease(task_id, self._owner)
                state = self._load(task_id)  # read after the take-over: the other runner writes nothing more
                if (over := already_over(state)) is None:
                    from_the_log(state, self._store.events(task_id))
                    self._continue(state, generation, cancel_by=by)
                    requested = True
            if over is not None:
                return over.model_dump(mode="json")
        run = self._runs[task_id]
        while (data := await self.wait_result(task_id, run, 1.0)) is None:
            scope = self._scopes.get(task_id)
            if scope is None:  # the run ended without a result: another runner took the task over meanwhile
                return superseded(task_id).model_dump(mode="json")
            scope.repeat()  # code under the run swallowed the cancellation
        return outcome(TaskResult.model_validate(data), requested).model_dump(mode="json")

    def _lease_taken(self, task_id: str) -> None:
        """The lease watch found another runner holding a task this Supervisor runs (a cancel or a forced
        resume elsewhere): this run is fenced out already, so it only stops."""
        log.warning("task %s was taken over by another runner (a cancel or a resume elsewhere); its run "
                    "here stops", task_id)
        self._stop_run(task_id)

    def _fence_cancelled(self, task_id: str, generation: int, by: str | None) -> None:
        """Revoke a cancelled run's lease generation once its outcome is stored: a call it started that
        answers late (a Ray task told to stop, an abandoned thread) can claim and write nothing more. A resume
        takes the task over as usual (a revoked lease has no runner)."""
        try:
            self._store.revoke_lease(task_id, generation, f"cancelled by {by}")
        except Exception:  # noqa: BLE001 - the outcome is stored; a late call's writes are then only unfenced
            log.warning("could not revoke the lease of cancelled task %s", task_id, exc_info=True)

    def _stop_run(self, task_id: str) -> None:
        """Stop this Supervisor's run of a task another runner owns now; its live events end here (the other
        runner's are read from the store)."""
        self._live.pop(task_id, None)
        task = self._running.get(task_id)
        if task is not None and not task.done():
            task.cancel()
