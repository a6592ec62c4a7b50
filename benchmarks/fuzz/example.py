"""One fuzz example: one whole task in-process, the role under test scripted, and how it ended."""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

from agents.config import RuntimeConfig, ToolPolicy
from agents.engine.runtime import LocalRuntime
from agents.engine.sink import MemorySink
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm.base import LLMRequest
from agents.llm.function_llm import FunctionLLM
from agents.results import TaskResult
from agents.roles.executor import Executor
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools import MemoryJournal, ToolRegistry
from benchmarks.fuzz.valid_replies import VALID, role_of
from benchmarks.fuzz.workload import TASK, TOOLS

__all__ = ["HANG_MARGIN_S", "Outcome", "build_runtime", "fuzz_config", "run_example"]

HANG_MARGIN_S = 5.0
"""An example still running this long after its task_timeout_s counts as a hang (unhandled)."""


def fuzz_config() -> RuntimeConfig:
    """Small caps so that every example ends fast, whatever the fuzzed role says."""
    return RuntimeConfig(max_step_retries=1, max_replans=1, step_timeout_s=5.0, task_timeout_s=30.0,
                         tools=ToolPolicy(backoff_s=0.0, backoff_max_s=0.0, max_attempts=2))


def build_runtime(llm: FunctionLLM, config: RuntimeConfig) -> LocalRuntime:
    """The roles wired in-process, as tests/support/local.py does (copied: benchmarks never import tests)."""
    registry = ToolRegistry(TOOLS)
    journal = MemoryJournal()
    return LocalRuntime(
        Router(llm, registry.catalog_text(), config.router_options()),
        Planner(llm, registry.schemas(), registry.catalog_text(), config.planner_options()),
        [Executor(TOOLS, llm, config.executor_options(), name=f"executor-{i}", journal=journal) for i in range(2)],
        Reflector(llm, config.prompt_options(), registry.catalog_text()),
        {t.name: t.spec for t in registry},
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one example ended. ``unhandled`` holds the crash description, if it crashed."""

    status: str
    stopped_reason: str
    unhandled: str | None = None


def _script(role: str, texts: Sequence[str]) -> FunctionLLM:
    calls = 0

    def reply(request: LLMRequest) -> str:
        nonlocal calls
        target = role_of(request)
        if target != role:
            return VALID[target](request)
        calls += 1
        return texts[min(calls, len(texts)) - 1]

    return FunctionLLM(reply, stream_chunk_size=7)


async def run_example(role: str, texts: Sequence[str], config: RuntimeConfig | None = None) -> Outcome:
    """One task with ``role`` answering ``texts`` (in order; the last one repeats) and the others valid."""
    config = config or fuzz_config()
    state = TaskState(task_id="fuzz", task=TASK, submitted_at=time.time())
    runner = TaskRunner(state, config=config, runtime=build_runtime(_script(role, texts), config),
                        sink=MemorySink("fuzz"))
    try:
        result: TaskResult = await asyncio.wait_for(runner.run(),
                                                    timeout=config.task_timeout_s + HANG_MARGIN_S)
    except TimeoutError:
        return Outcome("hang", "hang", f"no result {config.task_timeout_s + HANG_MARGIN_S:g}s after submit")
    except Exception:  # noqa: BLE001 - exactly what this script exists to count
        return Outcome("raised", "raised", traceback.format_exc(limit=12))
    if result.stopped_reason == "internal_error":
        return Outcome(result.status, result.stopped_reason,
                       result.error or "internal_error without an error")
    if result.status == "failed" and not (result.error or "").strip():
        return Outcome(result.status, result.stopped_reason, "failed without an error message")
    return Outcome(result.status, result.stopped_reason)
