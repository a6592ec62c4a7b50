"""Run the real state machine and roles in-process (no Ray): the fast path for flow tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from agents.checks import Check
from agents.config import RuntimeConfig
from agents.engine.runtime import LocalRuntime
from agents.engine.supervisor import SupervisorCore
from agents.engine.sink import MemorySink
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm import FunctionLLM
from agents.llm.base import LLM, LLMRequest
from agents.llm.profile import HOSTED, ModelProfile, profile_of
from agents.results import TaskResult
from agents.roles.executor import Executor
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.store import Store
from agents.tools import MemoryJournal, Tool, ToolRegistry
from support import wire
from support.tools import ALL


def local_runtime(llm: LLM, tools: Sequence[Tool] = ALL, config: RuntimeConfig | None = None,
                  executors: int = 2) -> LocalRuntime:
    config = config or RuntimeConfig()
    registry = ToolRegistry(tools)
    journal = MemoryJournal()
    return LocalRuntime(
        Router(llm, registry.catalog_text(), config.router_options()),
        Planner(llm, registry.schemas(), registry.catalog_text(), config.planner_options()),
        [Executor(tools, llm, config.executor_options(), name=f"executor-{i}", journal=journal) for i in range(executors)],
        Reflector(llm, config.prompt_options(), registry.catalog_text()),
        {t.name: t.spec for t in registry},
    )


async def run_task(llm: LLM, task: str, *, tools: Sequence[Tool] = ALL,
                   config: RuntimeConfig | None = None, checks: Sequence[Check] = ()) -> tuple[TaskResult, MemorySink]:
    config = config or RuntimeConfig()
    state = TaskState(task_id="t-local", task=task, submitted_at=time.time())
    sink = MemorySink("t-local")
    # The model's profile reaches the task as it does in an Orchestrator (SupervisorCore(profile=profile_of(llm))).
    runner = TaskRunner(state, config=config, runtime=local_runtime(llm, tools, config), sink=sink, checks=checks,
                        profile=profile_of(llm))
    return await runner.run(), sink


async def _run_in_turn(config: RuntimeConfig, fn: Callable[[LLMRequest], str], tasks: Sequence[str],
                       session_id: str | None) -> list[tuple[TaskResult, list[dict]]]:
    core = SupervisorCore(Store(config.store_path), local_runtime(FunctionLLM(fn), config=config), config)
    out = []
    try:
        for task in tasks:
            task_id = await core.submit(task, session_id=session_id)
            data = None
            while data is None:
                data = await core.wait_result(task_id, timeout_s=30)
            out.append((TaskResult.model_validate(data), await core.wait_events(task_id, 0, timeout_s=0)))
    finally:
        await core.shutdown()
    return out


async def _run_then_respond(config: RuntimeConfig, llm: LLM, task: str, reply: str,
                            tools: Sequence[Tool]) -> tuple[dict, TaskResult]:
    core = SupervisorCore(Store(config.store_path), local_runtime(llm, tools, config=config), config,
                          profile=profile_of(llm))
    try:
        task_id = await core.submit(task)
        first = None
        while first is None:
            first = await core.wait_result(task_id, timeout_s=30)
        run = await core.respond(task_id, reply)
        data = None
        while data is None:
            data = await core.wait_result(task_id, run=run, timeout_s=30)
        return first, TaskResult.model_validate(data)
    finally:
        await core.shutdown()


def run_then_respond(config: RuntimeConfig, llm: LLM, task: str, reply: str = "approve", *,
                     tools: Sequence[Tool] = ALL) -> tuple[dict, TaskResult]:
    """Run ``task`` on a fresh Supervisor core until it stops, answer its escalation with ``reply``
    (``orch.respond``), and wait for the run that follows: (the first result as stored, the second)."""
    return asyncio.run(_run_then_respond(config, llm, task, reply, tools))


def run_in_turn(config: RuntimeConfig, fn: Callable[[LLMRequest], str], tasks: Sequence[str],
                session_id: str | None = None) -> list[tuple[TaskResult, list[dict]]]:
    """Run the tasks one after another (each sees the turns and cache entries finished before it) on a fresh
    Supervisor core with the store at ``config.store_path``: (result, events) per task."""
    return asyncio.run(_run_in_turn(config, fn, tasks, session_id))


def prompt_text(request: LLMRequest) -> str:
    """Every message of ``request`` as one text, to assert on what a role was told."""
    return "\n".join(str(m.get("content") or "") for m in request.messages)


def plan_scripted(planner: Callable[[LLMRequest], str], *, executor: str = "", answer: str = "done",
                  profile: ModelProfile = HOSTED) -> FunctionLLM:
    """A model that routes to a plan, answers every planner call with ``planner(request)``, every executor call
    with ``executor`` and accepts with ``answer``: for tests about what the planner is asked. ``profile``: the
    model's (a strategy under test turned on)."""
    def reply(request: LLMRequest) -> str:
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return planner(request)
            case "executor":
                return executor
            case _:
                return wire.reflection(answer=answer)

    return FunctionLLM(reply, stream_chunk_size=24, profile=profile)
