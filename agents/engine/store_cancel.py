"""Cancelling a task from a process that runs none of its roles (``tetrarch cancel``, the live view's button).

A ``SupervisorCore`` on the task's store, with no roles, does what ``orch.cancel`` does for a task another
process runs (``agents.engine.cancel_commands``): it takes the task over, which fences the runner out at once
(that runner stops within its lease watch, ``lease_keeper.WATCH_S``), and records the cancel; then it shuts
down. No model, no Ray, nothing else starts.

    >>> config = RuntimeConfig(store_path="tasks.db")                                 # doctest: +SKIP
    >>> cancel_in_store(config, task_id, by="tetrarch cancel").cancelled               # doctest: +SKIP
    True
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.config import RuntimeConfig
from agents.engine.supervisor import SupervisorCore
from agents.results import CancelOutcome
from agents.store import Store

__all__ = ["cancel_in_store", "cancel_stored"]


class _NoRoles:
    """The runtime of a Supervisor that only records cancels: a run that records a cancel calls no role."""

    def tool_spec(self, name: str | None) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"a Supervisor that only records cancels runs no role (asked for {name!r})")


async def cancel_stored(config: RuntimeConfig, task_id: str, by: str) -> CancelOutcome:
    """Cancel ``task_id`` in ``config``'s store from this event loop (``UnknownTaskError`` for an unknown
    id)."""
    store = Store(config.store_location(), pool_size=config.deployment.store_pool_size, create=False)
    core = SupervisorCore(store, _NoRoles(), config)  # type: ignore[arg-type]
    try:
        return CancelOutcome.model_validate(await core.cancel(task_id, by))
    finally:
        await core.shutdown()


def cancel_in_store(config: RuntimeConfig, task_id: str, by: str) -> CancelOutcome:
    """``cancel_stored`` from synchronous code (a command, a worker thread)."""
    return asyncio.run(cancel_stored(config, task_id, by))
