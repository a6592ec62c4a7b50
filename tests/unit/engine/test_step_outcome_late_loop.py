"""A step's outer bound blames its executor only when no outcome came: if the Supervisor's own loop ran late and
the bound's timer fired just before an outcome that had already arrived was delivered, the outcome counts and the
live executor is not restarted (agents.engine.step_run.await_outcome)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agents.cluster.step_batches import BatchedStepHandle
from agents.engine import step_run
from agents.engine.step_run import Running, await_outcome
from agents.roles.messages import StepOutcome, StepRequest
from planning.models import PlanStep

TIMEOUT_S = 0.05


def _request() -> StepRequest:
    step = PlanStep(step_id=1, description="look it up", tool_name="lookup", tool_input={"city": "Rome"})
    return StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=TIMEOUT_S)


def _run(stall_s: float | None) -> tuple[StepOutcome, list[str]]:
    """One step whose outcome arrives after 0.02 s, at the end of a loop stall of ``stall_s`` (None: never)."""
    replaced: list[str] = []

    async def scenario() -> StepOutcome:
        handle = BatchedStepHandle(_request(), "k", "executor-0", "", on_done=lambda node, lost: None,
                                   cancel=lambda key: None, replace=lambda: replaced.append("executor-0"))
        done = StepOutcome(step_id=1, attempt=1, ok=True, started_at=0.0, finished_at=0.0, output=2.8,
                           executor="executor-0", output_inline=True)
        loop = asyncio.get_running_loop()

        def stalled_then_arrived() -> None:
            time.sleep(stall_s)  # the loop is busy past the bound; the outcome reaches it at the end
            loop.call_soon(handle.resolve, done)  # delivered a turn later, as a stream consumer would

        if stall_s is not None:
            loop.call_later(0.02, stalled_then_arrived)
        outcome, _ = await await_outcome(Running(1, 1, _request(), handle), None, time.monotonic)  # type: ignore[arg-type]
        return outcome

    return asyncio.run(scenario()), replaced


@pytest.fixture(autouse=True)
def short_bound(monkeypatch):
    monkeypatch.setattr(step_run, "_WEDGED_AFTER_S", 0.05)


def test_an_outcome_that_arrived_while_the_loop_was_late_counts():
    outcome, replaced = _run(stall_s=0.3)
    assert outcome.ok and outcome.output == 2.8 and replaced == []


def test_no_outcome_still_restarts_the_wedged_executor():
    outcome, replaced = _run(stall_s=None)
    assert not outcome.ok and outcome.error_kind == "timeout" and replaced == ["executor-0"]
    assert "executor-0 stopped responding" in (outcome.error or "")


def test_an_in_process_handle_is_settled_only_by_a_finished_attempt():
    from agents.engine.runtime import _LocalHandle

    async def scenario() -> tuple[object, object, object]:
        done = StepOutcome(step_id=1, attempt=1, ok=True, started_at=0.0, finished_at=0.0, output=2.8)

        async def finished() -> StepOutcome:
            return done

        ran, hung = _LocalHandle(asyncio.ensure_future(finished()), "executor-0"), \
            _LocalHandle(asyncio.ensure_future(asyncio.sleep(10)), "executor-1")
        early = ran.settled()
        await asyncio.sleep(0)
        hung.cancel()
        await asyncio.sleep(0)
        return early, ran.settled(), hung.settled()

    early, settled, cancelled = asyncio.run(scenario())
    assert early is None and settled is not None and settled.output == 2.8 and cancelled is None
