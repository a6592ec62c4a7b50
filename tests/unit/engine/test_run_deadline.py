"""``TaskRunner.run``'s bound on the whole run (``task_timeout_s``) and its stops from outside, pinned where
the run waits in a model call: a run past its deadline fails ``task_timeout`` with its result written; a
cancel through its scope ends it ``cancelled``; a cancel from outside (a shutdown, a lost lease) propagates
and writes no result; a call that swallows the deadline's cancellation and answers anyway lets the run go on
as it would have without the deadline (the deadline is a cancellation, not a verdict)."""

from __future__ import annotations

import asyncio
import time

import pytest
from support import wire
from support.local import local_runtime

from agents.config import RuntimeConfig
from agents.engine.sink import MemorySink
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm import FunctionLLM
from agents.llm.base import LLMRequest

ROUTE = wire.route("plan")
PLAN = wire.plan(wire.step(1, "subtract", {"a": 3, "b": 1}))
ACCEPT = wire.reflection("accept", answer="2")


def _runner(llm: FunctionLLM, timeout_s: float = 900.0) -> tuple[TaskRunner, MemorySink]:
    config = RuntimeConfig(store_path=":memory:", task_timeout_s=timeout_s)
    sink = MemorySink("t-deadline")
    state = TaskState(task_id="t-deadline", task="What is 3 - 1?", submitted_at=time.time())
    return TaskRunner(state, config=config, runtime=local_runtime(llm, config=config), sink=sink), sink


def _hanging_router(entered: asyncio.Event, *, swallow: bool = False) -> FunctionLLM:
    """A router call that waits until cancelled; ``swallow``: it then answers anyway."""
    async def reply(request: LLMRequest) -> str:
        if request.role != "router":
            return {"planner": PLAN, "reflector": ACCEPT}[request.role]
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            if not swallow:
                raise
        return ROUTE

    return FunctionLLM(reply)


def _types(sink: MemorySink) -> list[str]:
    return [e.type for e in sink.events]


def test_a_run_past_its_deadline_fails_task_timeout_and_says_what_to_do() -> None:
    async def main():
        runner, sink = _runner(_hanging_router(asyncio.Event()), timeout_s=0.2)
        return await runner.run(), sink

    result, sink = asyncio.run(main())
    assert (result.status, result.stopped_reason) == ("failed", "task_timeout")
    assert "task_timeout_s=0.2s" in (result.error or "") and "orch.resume" in (result.error or "")
    assert _types(sink)[-1] == "task_finished" and sink.checkpoints[-1]["stopped_reason"] == "task_timeout"


def test_a_cancel_through_the_scope_ends_the_run_cancelled() -> None:
    async def main():
        entered = asyncio.Event()
        runner, sink = _runner(_hanging_router(entered))
        task = asyncio.ensure_future(runner.run())
        await entered.wait()
        assert runner.cancel_scope.request("the API")
        return await task, sink

    result, sink = asyncio.run(main())
    assert (result.status, result.cancelled_by) == ("cancelled", "the API")
    assert _types(sink)[-1] == "task_finished"


def test_a_cancel_from_outside_propagates_and_writes_no_result() -> None:
    async def main():
        entered = asyncio.Event()
        runner, sink = _runner(_hanging_router(entered))
        task = asyncio.ensure_future(runner.run())
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return runner, sink

    runner, sink = asyncio.run(main())
    assert "task_finished" not in _types(sink) and runner.state.status is None


def test_a_call_that_swallows_the_deadlines_cancellation_lets_the_run_go_on() -> None:
    async def main():
        runner, sink = _runner(_hanging_router(asyncio.Event(), swallow=True), timeout_s=0.2)
        return await runner.run(), sink

    result, sink = asyncio.run(main())
    assert (result.status, result.answer) == ("accepted", "2")
    assert _types(sink)[-1] == "task_finished"


def test_a_run_within_its_deadline_is_not_touched_by_it() -> None:
    async def main():
        replies = {"router": ROUTE, "planner": PLAN, "reflector": ACCEPT}
        runner, _ = _runner(FunctionLLM(lambda r: replies[r.role]), timeout_s=30)
        result = await runner.run()
        # The deadline's timer went with the run: nothing is left to cancel this task later.
        await asyncio.sleep(0)
        return result, asyncio.current_task().cancelling()

    result, cancelling = asyncio.run(main())
    assert result.status == "accepted" and cancelling == 0
