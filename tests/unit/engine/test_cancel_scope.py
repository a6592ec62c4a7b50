"""The pieces of a cancel (``agents.engine.cancel``, ``lease_keeper``'s watch), without a Supervisor: the
scope stops its work where it waits and the run goes on to record it; a cancel from outside is not one; a
cancelled state reopens where it stopped; the event log completes what a checkpoint had not written yet; the
lease watch reports a task another runner took over."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agents.config import RuntimeConfig
from agents.engine.cancel import CancelScope, already_over, from_the_log, reopen, stop_records
from agents.engine.lease_keeper import LeaseKeeper
from agents.engine.store_cancel import _NoRoles
from agents.engine.supervisor import SupervisorCore
from agents.engine.task_state import CancelNote, StepState, TaskState
from agents.events import (PlanStepPayload, StepFailedPayload, StepFinishedPayload, StepStartedPayload,
                           TaskSubmittedPayload, make_event)
from agents.store import Store
from planning.models import PlanStep


def test_a_requested_cancel_stops_the_work_where_it_waits_and_the_run_goes_on():
    async def main():
        scope, reached = CancelScope(), []

        async def work():
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                reached.append("cancelled")
                raise

        runner = asyncio.ensure_future(scope.run(work))
        await asyncio.sleep(0.01)
        assert scope.request("the API") and not scope.request("MCP")
        by = await runner
        await asyncio.sleep(0)  # the run's own awaits after the cancel still work
        return by, reached, scope.request("later")

    assert asyncio.run(main()) == ("the API", ["cancelled"], False)


def test_a_cancel_requested_before_the_run_runs_nothing_and_one_from_outside_propagates():
    async def main():
        early = CancelScope()
        early.request("the API")
        called = []
        assert await early.run(lambda: called.append(1) or asyncio.sleep(0)) == "the API" and called == []

        outside = CancelScope()
        task = asyncio.ensure_future(outside.run(lambda: asyncio.sleep(60)))
        await asyncio.sleep(0.01)
        task.cancel()  # a shutdown, a lost lease: not a cancel of the task
        with pytest.raises(asyncio.CancelledError):
            await task
        assert outside.by is None

    asyncio.run(main())


def test_work_that_swallows_the_cancellation_is_cancelled_again():
    async def main():
        scope, swallowed = CancelScope(), []

        async def stubborn():
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                swallowed.append(1)
            await asyncio.sleep(60)

        runner = asyncio.ensure_future(scope.run(stubborn))
        await asyncio.sleep(0.01)
        scope.request("the API")
        await asyncio.sleep(0.01)
        assert not runner.done() and swallowed == [1]
        scope.repeat()
        return await asyncio.wait_for(runner, 2)

    assert asyncio.run(main()) == "the API"


def _state(**fields) -> TaskState:
    return TaskState(task_id="t1", task="x", submitted_at=0.0, **fields)


def test_a_cancelled_state_reopens_in_its_phase_and_others_do_not():
    state = _state(phase="done", status="cancelled", stopped_reason="cancelled", error="cancelled by the API",
                   finished_at=5.0, cancelled=CancelNote(by="the API", phase="execute", at=5.0))
    assert already_over(state).message == ("task t1 was already cancelled (by the API); orch.resume(task_id) "
                                           "continues it")
    assert reopen(state)
    assert (state.phase, state.status, state.error, state.cancelled) == ("execute", None, None, None)
    assert not reopen(_state(phase="done", status="accepted"))
    assert already_over(_state(phase="waiting", status="escalated")).status == "escalated"
    assert already_over(_state(phase="execute")) is None


def test_the_log_adds_streamed_steps_and_marks_started_ones_running():
    steps = [PlanStep(step_id=i, description=f"s{i}", tool_name="t", tool_input={}, depends_on=[])
             for i in (1, 2, 3)]
    state = _state(phase="execute", plan_version=1, plan_steps=[steps[0]],
                   steps={1: StepState(status="completed", attempts=1)})
    payloads = [*(PlanStepPayload(step=step) for step in steps),
                StepStartedPayload(step_id=1, attempt=1),
                StepFinishedPayload(step_id=1, attempt=1, started_at=0.0, finished_at=1.0),
                StepStartedPayload(step_id=2, attempt=1),
                StepFailedPayload(step_id=2, attempt=1, error_kind="executor_died", error="lost",
                                  will_retry=True),
                StepStartedPayload(step_id=3, attempt=1),
                StepFailedPayload(step_id=3, attempt=1, error_kind="permanent", error="no")]
    from_the_log(state, [make_event(p, task_id="t1", seq=i, ts=0.0) for i, p in enumerate(payloads, 1)])
    assert [s.step_id for s in state.plan_steps] == [1, 2, 3]
    assert {sid: rec.status for sid, rec in state.steps.items()} == {1: "completed", 2: "running"}
    assert stop_records(state.steps) == [(2, 1, 0.0)] and state.steps[2].status == "cancelled"


class _Leases:
    def __init__(self, held: set[str]) -> None:
        self.held = held

    def leases_held(self, owner: str, task_ids: list[str]) -> set[str]:
        return self.held & set(task_ids)

    def renew_leases(self, owner: str, task_ids: list[str], *, release: bool = False) -> int:
        return 0


def test_the_lease_watch_reports_each_running_task_another_runner_took_over():
    async def main():
        lost: list[str] = []
        leases: Any = _Leases({"a"})
        keeper = LeaseKeeper(leases, "me", lambda: ["a", "b"], on_lost=lost.append, watch_s=0.01).start()
        await asyncio.sleep(0.1)
        await keeper.stop()
        return lost

    lost = asyncio.run(main())
    assert lost and set(lost) == {"b"}


class _ResumedMeanwhile(Store):
    """A store on which another runner takes the task over right after the cancel took it (a resume racing it)."""

    def events(self, task_id: str, after_seq: int = 0) -> list:
        self.acquire_lease(task_id, "the resumer")
        return super().events(task_id, after_seq)


def test_a_cancel_that_loses_the_task_to_a_resume_says_so_and_writes_nothing(tmp_path):
    path = tmp_path / "t.db"
    with Store(path) as store:
        store.create_task("t1", "x", {}, lease_owner="elsewhere:1:ab")
        state = _state(phase="execute", plan_version=1)
        submitted = make_event(TaskSubmittedPayload(task="x"), task_id="t1", seq=1, ts=0.0)
        store.commit("t1", [submitted], checkpoint=state, status="running")

    async def main():
        roles: Any = _NoRoles()
        core = SupervisorCore(_ResumedMeanwhile(path), roles, RuntimeConfig(store_path=path))
        try:
            return await core.cancel("t1", "the API")
        finally:
            await core.shutdown()

    outcome = asyncio.run(main())
    assert (outcome["cancelled"], outcome["status"]) == (False, "running")
    assert "cancel it again" in outcome["message"]
    with Store(path) as store:
        assert store.last_seq("t1") == 1 and store.get_task("t1").status == "running"
