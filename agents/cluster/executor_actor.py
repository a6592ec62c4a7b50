"""The executor actor: runs steps sent one per call (``run``) or many per call (``run_batch``, a streaming
generator that reports each step's outcome as it finishes), and the journal it reaches by name.

A batch is how steps that became ready together travel: one actor call per executor instead of one per
step (the call's submission was most of the Supervisor's cost per step on Ray). The steps of a batch stay
independent: each runs as its own task under its own timeout, and the outcomes that finished together are
yielded together the moment they finish, so a slow step never holds back the others.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import pickle
import socket
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import ray

from agents.config import ExecutorOptions
from agents.errors import RoleUnavailableError
from agents.idempotency import ClaimReply, Fence
from agents.llm.base import LLM
from agents.roles.executor import Executor
from agents.roles.messages import StepOutcome, StepRequest
from agents.tools import Tool
from agents.tools.mcp import MCPTool

__all__ = ["BatchItem", "ExecutorActor", "RemoteJournal", "WhereAmI", "node_id"]

BatchItem = tuple[str, StepRequest, dict[int, Any]]
"""One step of a batch: its key (to cancel it by), its request, its inputs (values or ObjectRefs)."""

_INLINE_OUTPUT_BYTES = 64 * 1024
"""Outputs up to this size travel inside the step's outcome; larger ones stay in the object store."""


def node_id() -> str:
    try:
        return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - outside Ray (tests of the shells)
        return socket.gethostname()


class WhereAmI:
    """Mixed into every actor class: Ray-level introspection the role classes must not know about."""

    def ping(self) -> str:
        """The node this actor runs on (start-up checks and placement tests)."""
        return node_id()

    def pid(self) -> int:
        return os.getpid()


class RemoteJournal:
    """IdempotencyJournal backed by the JournalActor (durable, shared by every executor).

    It holds the journal's *name*, not its handle: an actor handle in a constructor argument cannot be
    reconstructed by lineage, so a restarted executor could fail to start (ray-project/ray#53727).
    """

    def __init__(self, name: str, namespace: str) -> None:
        self._name, self._namespace = name, namespace
        self._handle: Any = None

    async def _call(self, method: str, *args: Any) -> Any:
        try:
            if self._handle is None:
                self._handle = ray.get_actor(self._name, namespace=self._namespace)
            return await getattr(self._handle, method).remote(*args)
        except (ValueError, ray.exceptions.RayActorError) as exc:
            # Named as what it is: raised raw, Ray's ActorDiedError would read as the *executor's* death to the
            # Supervisor (a task error is an instance of its cause) and the step would be re-sent for nothing.
            self._handle = None  # a restarted journal is looked up again on the next call
            raise RoleUnavailableError("journal", f"{type(exc).__name__}: {exc}") from None

    async def get(self, key: str):
        return await self._call("get", key)

    async def put(self, key: str, output: Any) -> None:
        await self._call("put", key, output)

    async def claim(self, key: str, fence: Fence) -> ClaimReply:
        return await self._call("claim", key, fence)

    async def record(self, key: str, fence: Fence, output: Any) -> bool:
        return await self._call("record", key, fence, output)


class ExecutorActor(WhereAmI):
    """Runs steps. Not a bare ``Executor``: it awaits the outputs of dependencies (ObjectRefs) and returns a
    small output inline with the outcome, a large one as an object of its own, so the Supervisor awaits only
    the small outcome and hands the output's reference to dependents without fetching it. At most
    ``max_steps`` steps run at once, however they were sent."""

    def __init__(self, tools: Sequence[Tool], llm: LLM, options: ExecutorOptions, name: str,
                 journal_name: str | None, namespace: str, supervisor_name: str | None = None,
                 max_steps: int = 64) -> None:
        journal = RemoteJournal(journal_name, namespace) if journal_name else None
        self._name = name
        self._role = Executor(tools, llm, options, name=name, journal=journal, node_id=node_id())
        # The templates and the tokenizer outputs are measured with: a cold first batch waited 0.7-2.3 s for the
        # tokenizer (measured), slow and quick steps alike.
        self._role.warm_up()
        self._slots = asyncio.Semaphore(max_steps)
        self._batched: dict[str, asyncio.Task[tuple[StepOutcome, Any]]] = {}
        if supervisor_name and any(isinstance(t, MCPTool) for t in tools):
            from agents.tools.mcp.connection import on_tools_changed

            on_tools_changed(_Forward(supervisor_name, namespace))

    def use_tools(self, tools: Sequence[Tool]) -> None:
        self._role.use_tools(tools)

    async def run(self, req: StepRequest, inputs: dict[int, Any]) -> tuple[StepOutcome, Any]:
        """One step: ``(outcome, None)`` with a small output inline, else ``(outcome, output)`` (two objects)."""
        async with self._slots:
            resolved = {}
            for dep, value in inputs.items():
                resolved[dep] = await value if isinstance(value, ray.ObjectRef) else value
            outcome = await self._role.run(req, resolved)
        if outcome.ok and _small(outcome.output):
            # Inline: the Supervisor has the value with the outcome (one await, no second object to fetch).
            return outcome, None
        return dataclasses.replace(outcome.without_output(), output_inline=False), outcome.output

    async def run_batch(self, batch: list[BatchItem]) -> AsyncIterator[Any]:
        """Run every step of ``batch`` at once (called with ``num_returns="streaming"``). Yields ``(key, outcome)``
        of the steps that finished together as soon as they finish, then, in the same order, the output of
        each of them that was too large to travel inline, as an object of its own."""
        finished: list[asyncio.Task[tuple[StepOutcome, Any]]] = []
        wake = asyncio.Event()

        def on_done(task: asyncio.Task[tuple[StepOutcome, Any]]) -> None:
            finished.append(task)
            wake.set()

        keys: dict[asyncio.Task[tuple[StepOutcome, Any]], str] = {}
        for key, req, inputs in batch:
            task = asyncio.ensure_future(self._one_of_batch(req, inputs))
            keys[task], self._batched[key] = key, task
            task.add_done_callback(on_done)
        left = len(keys)
        try:
            while left:
                while not finished:
                    wake.clear()
                    await wake.wait()
                done, finished[:] = list(finished), []
                left -= len(done)
                results = [(keys[task], *task.result()) for task in done if not task.cancelled()]
                if results:
                    yield [(key, outcome) for key, outcome, _ in results]
                for _, outcome, output in results:
                    if outcome.ok and not outcome.output_inline:
                        yield output
        finally:
            for task, key in keys.items():
                task.cancel()  # the Supervisor closed the stream (or the generator failed): nothing left runs
                if self._batched.get(key) is task:
                    del self._batched[key]

    async def _one_of_batch(self, req: StepRequest, inputs: dict[int, Any]) -> tuple[StepOutcome, Any]:
        try:
            return await self.run(req, inputs)
        except Exception as exc:  # noqa: BLE001 - one step's error (a lost input, the journal) is its outcome alone
            now = time.time()
            return StepOutcome(step_id=req.step.step_id, attempt=req.attempt, ok=False, started_at=now,
                               finished_at=now, error_kind="transient", executor=self._name,
                               error=f"step {req.step.step_id} failed inside {self._name}: "
                                     f"{type(exc).__name__}: {exc}"), None

    async def cancel_steps(self, keys: list[str]) -> None:
        """Cancel steps of running batches (a retry reset them, the plan restarted, the task stopped)."""
        for key in keys:
            task = self._batched.get(key)
            if task is not None:
                task.cancel()


class _Forward:
    """Tells the Supervisor that an executor's MCP session saw a server's tool list change."""

    def __init__(self, name: str, namespace: str) -> None:
        self._name, self._namespace, self._handle = name, namespace, None

    def __call__(self, server_key: str) -> None:
        if self._handle is None:
            self._handle = ray.get_actor(self._name, namespace=self._namespace)
        self._handle.tools_changed.remote(server_key)


def _small(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, (str, bytes)):
        return len(value) <= _INLINE_OUTPUT_BYTES
    try:
        return len(pickle.dumps(value, protocol=5)) <= _INLINE_OUTPUT_BYTES
    except Exception:  # noqa: BLE001 - Ray's serializer may still manage; keep it out of line
        return False
