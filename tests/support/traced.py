"""Run tasks through the real Supervisor core and SQLite store, in-process (no Ray), for the trace tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from agents.checks import Check
from agents.config import RuntimeConfig
from agents.engine.supervisor import SupervisorCore
from agents.llm.base import LLM
from agents.llm.profile import profile_of
from agents.results import TaskResult
from agents.store import Store
from agents.tools import Tool
from support.local import local_runtime
from support.tools import ALL


async def _run(store_path: Path, llm: LLM, task: str, tools: Sequence[Tool],
               config: RuntimeConfig, checks: Sequence[Check]) -> tuple[str, TaskResult, list[dict]]:
    # The model's profile reaches the task as it does in an Orchestrator.
    core = SupervisorCore(Store(store_path), local_runtime(llm, tools, config), config, checks=checks,
                          profile=profile_of(llm))
    try:
        task_id = await core.submit(task)
        result = None
        while result is None:
            result = await core.wait_result(task_id, timeout_s=30)
        live = await core.wait_events(task_id, 0, timeout_s=0)
        return task_id, TaskResult.model_validate(result), live
    finally:
        await core.shutdown()


def run_stored(store_path: Path, llm: LLM, task: str, tools: Sequence[Tool] = ALL,
               config: RuntimeConfig | None = None,
               checks: Sequence[Check] = ()) -> tuple[str, TaskResult, list[dict]]:
    """(task id, result as the API returns it, live events as ``handle.events()`` sees them)."""
    config = config or RuntimeConfig(store_path=str(store_path))
    return asyncio.run(_run(store_path, llm, task, tools, config, checks))
