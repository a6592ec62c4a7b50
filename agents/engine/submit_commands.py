"""The Supervisor's ``submit`` commands: one task (``orch.submit``, a session's turn), or a burst of them.

Mixed into ``SupervisorCore`` (which owns the state it uses). ``submit_many`` is what the driver sends when
``Orchestrator.submit`` is called faster than the Supervisor answers (``agents.submits``): the tasks of a burst
go in one actor call and their rows and leases in one store transaction, instead of a round trip and a commit
each. A task starts exactly as ``submit`` starts it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agents.engine.task_state import TaskState
from agents.events import TaskSubmittedPayload
from agents.outputs import OutputSpec
from agents.store import Store, TaskExistsError


if TYPE_CHECKING:
    from agents.engine.memory_link import MemoryLink
    from agents.engine.sink import StoreSink

__all__ = ["SubmitCommands", "Submission"]

Submission = tuple[str, str, OutputSpec | None]
"""One task of a burst: ``(task, task_id, output)`` (no session: a session's turn goes through ``submit``)."""


class SubmitCommands:
    """``SupervisorCore``'s submit commands; the attributes and methods below are the core's."""

    _store: Store
    _owner: str
    _clock: Callable[[], float]
    _memory: MemoryLink
    _config_json: dict[str, Any]
    _results: dict[str, tuple[int, Any]]

    if TYPE_CHECKING:
        async def _ready(self) -> None: ...
        async def _current_tools(self) -> None: ...
        def _sink(self, task_id: str, generation: int, *, new: bool = False) -> StoreSink: ...
        def _start(self, state: TaskState, sink: StoreSink, first: Any = None) -> None: ...
        async def wait_result(self, task_id: str, run: int = 1,
                              timeout_s: float = 10.0) -> dict[str, Any] | None: ...

    async def submit(self, task: str, task_id: str | None = None, session_id: str | None = None,
                     output: OutputSpec | None = None) -> str:
        """Start a task; with ``session_id`` it is the session's next turn and sees the earlier ones."""
        await self._ready()
        await self._current_tools()
        if task_id is not None and self._store.get_task(task_id) is not None:
            return task_id  # a submit retried after a Supervisor restart: the task exists already
        task_id = task_id or uuid.uuid4().hex[:16]
        history = "" if session_id is None else self._memory.start_turn(session_id, task, task_id)
        generation = self._store.create_task(task_id, task, self._config_json, lease_owner=self._owner)
        assert generation is not None
        self._begin(task, task_id, output, generation, session_id=session_id, history=history)
        return task_id

    async def submit_many(self, items: Sequence[Submission]) -> list[Exception | None]:
        """Start every task of ``items`` in order, their rows written in one transaction; each one's error in its
        place (None: started). An id that exists already is a burst retried after a Supervisor restart: that
        task was started then (and re-attached since), so it counts as started."""
        await self._ready()
        await self._current_tools()
        try:
            made = self._store.create_tasks([(task_id, task) for task, task_id, _ in items], self._config_json,
                                            lease_owner=self._owner)
        except Exception as exc:  # noqa: BLE001 - nothing was written: every task of the burst hears why
            return [exc] * len(items)
        errors: list[Exception | None] = []
        for (task, task_id, output), generation in zip(items, made):
            try:
                if not isinstance(generation, TaskExistsError):
                    self._begin(task, task_id, output, generation)
            except Exception as exc:  # noqa: BLE001 - this task's own error; the others start
                errors.append(exc)
            else:
                errors.append(None)
        return errors

    async def wait_results(self, task_id: str, run: int, timeout_s: float,
                           others: Sequence[str]) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
        """``wait_result`` of ``task_id``, and the results of ``others`` this Supervisor holds finished in memory
        (``agents.result_reads``: a driver reading many handles asks once, not once each)."""
        own = await self.wait_result(task_id, run, timeout_s)
        done = {other: got[1].model_dump(mode="json") for other in others
                if (got := self._results.get(other)) is not None}
        return own, done

    def _begin(self, task: str, task_id: str, output: OutputSpec | None, generation: int, *,
               session_id: str | None = None, history: str = "") -> None:
        state = TaskState(task_id=task_id, task=task, submitted_at=self._clock(), session_id=session_id,
                          history=history, output=output)
        sink = self._sink(task_id, generation, new=True)  # its row was created just before
        sink.emit(TaskSubmittedPayload(task=task), state)
        self._start(state, sink)

