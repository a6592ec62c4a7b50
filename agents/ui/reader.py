"""What the page reads from a store: task rows for the list, a task's events and LLM-call summaries.

Only the store's public read API is used (``list_tasks``, ``get_task``, ``events``, ``llm_calls``,
``get_result``, ``get_step_outputs``), so the page works over any backend that offers it and shows exactly
what the store keeps: values the store redacted stay redacted. Rows of a task are recomputed only when its
``updated`` time moved, so a list of hundreds of tasks costs one query per refresh plus the tasks that changed.

Example:
    >>> import tempfile, pathlib
    >>> from agents.store import Store
    >>> store = Store(pathlib.Path(tempfile.mkdtemp()) / "t.db")
    >>> store.create_task("t1", "add 2 and 2", {})
    >>> [row.status for row in TaskReader(store).rows()]
    ['submitted']
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from agents.events import AnyEvent
from agents.results import TaskResult
from agents.store.records import TaskRow, TaskSummary
from agents.config.prices import PriceTable

__all__ = ["LLMCallView", "ReadableStore", "TaskListRow", "TaskReader", "llm_call_view"]


class ReadableStore(Protocol):
    """The read side of ``agents.store.Store`` the page needs (any backend offering it will do)."""

    def list_tasks(self, status: Any = None, limit: int = 50) -> list[TaskSummary]: ...
    def get_task(self, task_id: str) -> TaskRow | None: ...
    def events(self, task_id: str, after_seq: int = 0) -> list[AnyEvent]: ...
    def llm_calls(self, task_id: str) -> list[dict[str, Any]]: ...
    def get_result(self, task_id: str) -> TaskResult | None: ...
    def get_step_outputs(self, task_id: str, plan_version: int | None = None) -> dict[tuple[int, int], Any]: ...


class TaskListRow(BaseModel):
    """One line of the task list."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task: str
    status: str
    created: float
    updated: float
    wall_s: float | None
    """Submit to finish; for an unfinished task, submit to its last write."""
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None
    """From the price table the page was started with (``tetrarch ui --prices``); without one, a finished
    task's own ``result.usage.cost_usd`` (priced by ``RuntimeConfig.prices`` as it ran); None when a call's
    model is not in the table, or nothing priced it."""


class LLMCallView(BaseModel):
    """An LLM call as the page shows it: who, when, how much; never the prompt or the reply."""

    model_config = ConfigDict(frozen=True)

    index: int
    role: str
    model: str
    start: float
    end: float
    input_tokens: int
    output_tokens: int
    failed: bool


def llm_call_view(index: int, record: dict[str, Any]) -> LLMCallView | None:
    end = record.get("ended_at")
    if end is None:
        return None
    usage = record.get("usage") or {}
    return LLMCallView(index=index, role=str(record.get("role") or ""), model=str(record.get("model") or ""),
                       start=float(end) - float(record.get("latency_s") or 0.0), end=float(end),
                       input_tokens=int(usage.get("input_tokens") or 0),
                       output_tokens=int(usage.get("output_tokens") or 0), failed=bool(record.get("error")))


@dataclass(frozen=True, slots=True)
class _Spent:
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


class TaskReader:
    """Task rows with a per-task cache keyed by the task's last write."""

    def __init__(self, store: ReadableStore, clock: Callable[[], float] = time.time,
                 prices: PriceTable | None = None) -> None:
        self.store, self._clock, self._prices = store, clock, prices
        self._spent: dict[str, tuple[float, _Spent, float | None]] = {}

    def rows(self, limit: int = 200) -> list[TaskListRow]:
        return [self._row(s) for s in self.store.list_tasks(limit=limit)]

    def _row(self, summary: TaskSummary) -> TaskListRow:
        cached = self._spent.get(summary.task_id)
        if cached is None or cached[0] != summary.updated:
            spent, wall = self._measure(summary)
            self._spent[summary.task_id] = cached = (summary.updated, spent, wall)
        _, spent, wall = cached
        return TaskListRow(task_id=summary.task_id, task=summary.task, status=summary.status,
                           created=summary.created, updated=summary.updated, wall_s=wall,
                           llm_calls=spent.llm_calls, input_tokens=spent.input_tokens,
                           output_tokens=spent.output_tokens, cost_usd=spent.cost_usd)

    def _measure(self, summary: TaskSummary) -> tuple[_Spent, float | None]:
        result = self.store.get_result(summary.task_id) if summary.wall_s is not None else None
        # The result's usage has no model names: with a price table the call records are read for them.
        calls = self.store.llm_calls(summary.task_id) if result is None or self._prices is not None else []
        cost = None if self._prices is None else self._prices.records_cost(calls)
        if result is not None:
            total = result.usage.total
            if self._prices is None:  # what it was priced at when it ran (RuntimeConfig.prices), if it was
                cost = result.usage.cost_usd
            return _Spent(total.llm_calls, total.input_tokens, total.output_tokens, cost), result.timings.wall_s
        usage = [c.get("usage") or {} for c in calls]
        spent = _Spent(sum(int(u.get("llm_calls") or 1) for u in usage),
                       sum(int(u.get("input_tokens") or 0) for u in usage),
                       sum(int(u.get("output_tokens") or 0) for u in usage), cost)
        return spent, summary.updated - summary.created

    def llm_calls(self, task_id: str, after: int = 0) -> list[LLMCallView]:
        views = (llm_call_view(i, r) for i, r in enumerate(self.store.llm_calls(task_id)) if i >= after)
        return [v for v in views if v is not None]
