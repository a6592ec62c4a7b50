"""What a Ray step handle says about an outcome that has already arrived (``StepHandle.settled``), read the way
``outcome()`` reads it: a step's outer bound uses it before blaming the executor (local Ray)."""

from __future__ import annotations

import time

import pytest

from agents.cluster.ray_runtime import _RayStepHandle
from agents.roles.messages import StepOutcome, StepRequest
from planning.models import PlanStep

pytestmark = pytest.mark.ray


def _request() -> StepRequest:
    step = PlanStep(step_id=3, description="look it up", tool_name="lookup", tool_input={"city": "Rome"})
    return StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5)


def _handle(ray, meta_ref) -> tuple[_RayStepHandle, list[str]]:
    replaced: list[str] = []
    handle = _RayStepHandle(meta_ref, ray.put(None), on_done=lambda node, lost: None, executor="executor-1",
                            node_id="", replace=lambda: replaced.append("executor-1"), req=_request())
    return handle, replaced


def _ready(ray, ref) -> None:
    ray.wait([ref], timeout=30)


def test_an_arrived_failure_inside_a_live_executor_is_the_steps_own_failure(ray_session):
    ray = ray_session

    @ray.remote
    def journal_write() -> StepOutcome:
        raise ConnectionError("the journal actor went away")

    ref = journal_write.remote()
    _ready(ray, ref)
    handle, replaced = _handle(ray, ref)
    settled = handle.settled()
    assert settled is not None and not settled.ok
    assert settled.step_id == 3 and settled.executor == "executor-1"
    assert "failed inside executor-1" in settled.error and "ConnectionError" in settled.error
    assert replaced == []


def test_an_arrived_success_is_returned_and_a_pending_one_is_not(ray_session):
    ray = ray_session

    @ray.remote
    def finished(delay_s: float) -> StepOutcome:
        time.sleep(delay_s)
        return StepOutcome(step_id=3, attempt=1, ok=True, started_at=0.0, finished_at=0.0, output=2.8,
                           executor="executor-1", output_inline=True)

    done = finished.remote(0.0)
    _ready(ray, done)
    settled = _handle(ray, done)[0].settled()
    assert settled is not None and settled.ok and settled.output == 2.8
    pending = finished.remote(30.0)
    assert _handle(ray, pending)[0].settled() is None
    ray.cancel(pending, force=True)
