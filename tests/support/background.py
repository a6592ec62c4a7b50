"""A Supervisor core (the real engine and store, no Ray) on its own event loop thread, so a test can submit
tasks, answer escalations and watch them from elsewhere (the web view, a browser) while they run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from agents.config import RuntimeConfig
from agents.engine.supervisor import SupervisorCore
from agents.llm.base import LLM
from agents.results import CancelOutcome, TaskResult
from agents.store import Store
from agents.tools import Tool
from support.local import local_runtime
from support.tools import ALL


class BackgroundCore:
    def __init__(self, store_path: Path, llm: LLM, tools: Sequence[Tool] = ALL,
                 config: RuntimeConfig | None = None) -> None:
        self.config = config or RuntimeConfig(store_path=store_path)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="core", daemon=True)
        self._thread.start()

        async def build() -> SupervisorCore:
            return SupervisorCore(Store(store_path), local_runtime(llm, tools, self.config), self.config)

        self.core = self._run(build())

    def _run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, task: str) -> str:
        return self._run(self.core.submit(task))

    def respond(self, task_id: str, text: str, by: str | None = None) -> int:
        return self._run(self.core.respond(task_id, text, by))

    async def respond_async(self, task_id: str, text: str, by: str) -> int:
        """The web view's responder: ``orch.respond`` on this core's loop."""
        future: Future[int] = asyncio.run_coroutine_threadsafe(self.core.respond(task_id, text, by), self.loop)
        return await asyncio.wrap_future(future)

    async def cancel_async(self, task_id: str, by: str) -> CancelOutcome:
        """The web view's canceller: ``orch.cancel`` on this core's loop."""
        future: Future[dict[str, Any]] = asyncio.run_coroutine_threadsafe(self.core.cancel(task_id, by),
                                                                          self.loop)
        return CancelOutcome.model_validate(await asyncio.wrap_future(future))

    def result(self, task_id: str, run: int = 1, timeout: float = 60) -> TaskResult:
        async def wait() -> dict[str, Any]:
            data = None
            while data is None:
                data = await self.core.wait_result(task_id, run=run, timeout_s=timeout)
            return data

        return TaskResult.model_validate(self._run(wait(), timeout + 5))

    def close(self) -> None:
        self._run(self.core.shutdown())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def __enter__(self) -> BackgroundCore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
