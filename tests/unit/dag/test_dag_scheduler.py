"""Every scheduler transition and error, with exact messages."""

from __future__ import annotations

import json
import pickle
import time

import pytest

from dag import (
    CycleError,
    DagError,
    DuplicateStepError,
    InvalidTransitionError,
    NotReadyError,
    Scheduler,
    SchedulerSealedError,
    SelfDependencyError,
    SnapshotError,
    StaleAttemptError,
    StepState,
    UnknownDependencyError,
    UnknownStepError,
)

P, R, C, F, S, X = (StepState.PENDING, StepState.RUNNING, StepState.COMPLETED, StepState.FAILED,
                    StepState.SKIPPED, StepState.CANCELLED)


def diamond(sealed: bool = True) -> Scheduler:
    """1 → (2, 3) → 4, plus 5 → 6 independent."""
    s = Scheduler()
    for sid, deps in {1: [], 2: [1], 3: [1], 4: [2, 3], 5: [], 6: [5]}.items():
        s.add_step(sid, deps)
    if sealed:
        s.seal()
    return s


def run(s: Scheduler, sid: int, output: object = None) -> None:
    s.start(sid)
    s.complete(sid, output)


def states(s: Scheduler) -> dict[int, StepState]:
    return {sid: s.state(sid) for sid in s.step_ids()}


# --------------------------------------------------------------------------------------------- building
def test_new_steps_are_pending_and_only_roots_are_ready():
    s = diamond()
    assert states(s) == dict.fromkeys(range(1, 7), P)
    assert s.ready() == [1, 5]
    assert s.dependencies(4) == frozenset({2, 3})
    assert s.dependents(1) == frozenset({2, 3}) and s.dependents(4) == frozenset()
    assert len(s) == 6 and 4 in s and 7 not in s


def test_ready_is_a_pure_query():
    s = diamond()
    assert s.ready() == s.ready() == [1, 5]
    assert s.counts()[P] == 6


def test_duplicate_dependencies_count_once():
    s = Scheduler()
    s.add_step(1)
    s.add_step(2, [1, 1, 1])
    run(s, 1)
    assert s.ready() == [2]


def test_forward_reference_is_not_ready_until_the_step_exists_and_completes():
    s = Scheduler()
    s.add_step(2, [1])
    assert s.ready() == []
    with pytest.raises(NotReadyError) as info:
        s.start(2)
    assert str(info.value) == "step 2 is not ready: it waits for step(s) 1; only start ids returned by ready()"
    assert info.value.waiting_on == (1,)
    s.add_step(1)
    assert s.ready() == [1]
    run(s, 1, "x")
    assert s.ready() == [2]


def test_duplicate_step():
    s = diamond(sealed=False)
    with pytest.raises(DuplicateStepError, match=r"^step 3 was already added; give every step a unique step_id$"):
        s.add_step(3)


def test_self_dependency():
    s = Scheduler()
    with pytest.raises(SelfDependencyError) as info:
        s.add_step(4, [1, 4])
    assert str(info.value) == "step 4 depends on itself; remove 4 from its depends_on"
    assert 4 not in s


def test_cycle_closed_by_a_new_step_leaves_the_state_unchanged():
    s = Scheduler()
    s.add_step(2, [1])
    s.add_step(3, [2])
    before = s.snapshot()
    with pytest.raises(CycleError) as info:
        s.add_step(1, [3])
    assert str(info.value) == "steps 1 → 2 → 3 → 1 form a dependency cycle; remove one of these dependencies"
    assert info.value.cycle == (1, 2, 3)
    assert s.snapshot() == before and s.dependents(3) == frozenset() and 1 not in s
    s.add_step(1)  # the same id without the bad edge is fine
    assert s.ready() == [1]


def test_cycle_reports_the_shortest_cycle():
    s = Scheduler()
    s.add_step(2, [1])
    s.add_step(3, [2])
    s.add_step(4, [1])
    with pytest.raises(CycleError) as info:
        s.add_step(1, [3, 4])
    assert info.value.cycle == (1, 4)


def test_sealed_scheduler_rejects_new_steps():
    s = diamond()
    with pytest.raises(SchedulerSealedError) as info:
        s.add_step(7)
    assert str(info.value) == ("cannot add step 7: the plan is sealed (complete); "
                               "start a new Scheduler for a new plan")
    with pytest.raises(SchedulerSealedError):
        s.preload(8, [], "x")
    assert s.is_sealed


def test_seal_with_unknown_dependencies_names_the_step_and_stays_unsealed():
    s = Scheduler()
    s.add_step(3, [1, 9])
    s.add_step(5, [7])
    with pytest.raises(UnknownDependencyError) as info:
        s.seal()
    assert str(info.value) == ("step 3 depends on steps 1, 9, not in the plan; "
                               "add them or remove them from depends_on")
    assert (info.value.step_id, info.value.missing) == (3, (1, 9))
    assert not s.is_sealed
    s.add_step(1)
    s.add_step(9)
    with pytest.raises(UnknownDependencyError, match=r"^step 5 depends on step 7, not in the plan; add it or"):
        s.seal()


def test_preload_adds_a_completed_step_and_releases_forward_dependents():
    s = Scheduler()
    s.add_step(2, [1])
    s.preload(1, [], {"city": "Rome"})
    assert s.state(1) is C and s.output(1) == {"city": "Rome"} and s.attempt(1) == 0
    assert s.ready() == [2]
    s.seal()
    assert not s.is_done()
    run(s, 2)
    assert s.is_done() and s.outputs() == {1: {"city": "Rome"}, 2: None}


def test_step_added_after_its_dependency_failed_is_skipped_at_once():
    s = Scheduler()
    s.add_step(1)
    s.add_step(3, [2])  # forward reference to 2
    s.start(1)
    s.fail(1, "boom")
    s.add_step(2, [1])
    assert s.state(2) is S and s.state(3) is S
    s.seal()
    assert s.is_done()


# ------------------------------------------------------------------------------------------ transitions
def test_start_returns_attempt_and_moves_to_running():
    s = diamond()
    assert s.start(1) == 1
    assert s.state(1) is R and s.running() == [1] and s.ready() == [5]


def test_start_twice_is_rejected():
    s = diamond()
    s.start(1)
    with pytest.raises(InvalidTransitionError) as info:
        s.start(1)
    assert str(info.value) == ("cannot start step 1: it is running; "
                               "wait for its complete() or fail(), or cancel() it")


def test_start_waits_for_every_dependency():
    s = diamond()
    run(s, 1)
    run(s, 2)
    with pytest.raises(NotReadyError, match=r"waits for step\(s\) 3;"):
        s.start(4)
    run(s, 3)
    assert s.ready() == [4, 5]


def test_complete_records_output_and_releases_dependents():
    s = diamond()
    s.start(1)
    s.complete(1, [1, 2])
    assert s.state(1) is C and s.output(1) == [1, 2] and s.error(1) is None
    assert s.ready() == [2, 3, 5]


def test_complete_requires_running():
    s = diamond()
    with pytest.raises(InvalidTransitionError) as info:
        s.complete(1, "x")
    assert str(info.value) == "cannot complete step 1: it is pending; it has not started; start() it when ready() lists it"
    run(s, 1)
    with pytest.raises(InvalidTransitionError, match=r"^cannot complete step 1: it is completed; it already finished; "
                                                     r"retry\(\) it to run it again$"):
        s.complete(1, "again")
    with pytest.raises(InvalidTransitionError, match=r"^cannot fail step 1: it is completed"):
        s.fail(1, "late")


def test_fail_skips_exactly_the_pending_transitive_dependents():
    s = diamond()
    run(s, 1)
    s.start(2)
    s.start(5)
    s.fail(2, "tool timed out")
    assert states(s) == {1: C, 2: F, 3: P, 4: S, 5: R, 6: P}
    assert s.error(2) == "tool timed out" and s.error(4) is None
    assert s.ready() == [3]
    run(s, 3)
    assert s.ready() == []  # 4 stays skipped even though its other dependency completed
    s.complete(5)
    run(s, 6)
    assert s.is_done()
    assert s.counts() == {P: 0, R: 0, C: 4, F: 1, S: 1, X: 0}


def test_output_of_a_step_that_did_not_complete_is_an_error():
    s = diamond()
    with pytest.raises(InvalidTransitionError) as info:
        s.output(1)
    assert str(info.value) == ("cannot read the output of step 1: it is pending; "
                               "only completed steps have an output")


def test_unknown_step_everywhere():
    s = diamond()
    for call in (s.state, s.attempt, s.output, s.error, s.start, s.retry, s.cancel, s.dependencies,
                 s.dependents, lambda i: s.complete(i, 1), lambda i: s.fail(i, "x")):
        with pytest.raises(UnknownStepError) as info:
            call(42)
        assert str(info.value) == "step 42 is not in this plan; add it with add_step() first"


# ------------------------------------------------------------------------------------- retry and stale
def test_retry_failed_step_gets_a_new_attempt_and_unskips_dependents():
    s = diamond()
    run(s, 1)
    s.start(2)
    s.fail(2, "boom")
    assert s.state(4) is S
    assert s.retry(2) == []
    assert s.state(2) is P and s.state(4) is P and s.error(2) is None
    assert s.ready() == [2, 3, 5]
    assert s.start(2) == 2
    assert s.attempt(2) == 2


def test_retry_completed_step_resets_downstream_and_reports_running_dependents():
    s = diamond()
    run(s, 1, "v1")
    s.start(2)
    run(s, 3, "three")
    assert s.retry(1) == [2]
    assert states(s) == {1: P, 2: P, 3: P, 4: P, 5: P, 6: P}
    assert s.outputs() == {}
    assert s.ready() == [1, 5]
    assert s.start(1) == 2


def test_stale_attempt_results_are_rejected_after_retry():
    s = diamond()
    run(s, 1)
    attempt = s.start(2)
    s.retry(1)
    with pytest.raises(StaleAttemptError) as info:
        s.complete(2, "late", attempt=attempt)
    assert str(info.value) == "attempt 1 of step 2 is stale (current attempt 1, pending); drop this result"
    with pytest.raises(StaleAttemptError):
        s.fail(2, "late", attempt=attempt)
    run(s, 1)
    assert s.start(2) == 2
    with pytest.raises(StaleAttemptError, match=r"^attempt 1 of step 2 is stale \(current attempt 2, running\)"):
        s.complete(2, "late", attempt=1)
    s.complete(2, "fresh", attempt=2)
    assert s.output(2) == "fresh"


def test_retry_keeps_dependents_blocked_by_another_failure_skipped():
    s = diamond()
    run(s, 1)
    s.start(2)
    s.start(3)
    s.fail(2, "a")
    s.fail(3, "b")
    s.retry(2)
    assert s.state(2) is P and s.state(3) is F and s.state(4) is S


def test_retry_a_skipped_step_whose_dependency_is_dead_points_at_the_dependency():
    s = diamond()
    run(s, 1)
    s.start(2)
    s.fail(2, "a")
    with pytest.raises(InvalidTransitionError) as info:
        s.retry(4)
    assert str(info.value) == "cannot retry step 4: it is skipped; its dependency step 2 is failed; retry step 2 instead"


def test_retry_pending_or_running_is_rejected():
    s = diamond()
    with pytest.raises(InvalidTransitionError, match=r"^cannot retry step 1: it is pending; nothing to retry yet$"):
        s.retry(1)
    s.start(1)
    with pytest.raises(InvalidTransitionError, match=r"^cannot retry step 1: it is running; cancel\(\) it first$"):
        s.retry(1)


def test_retry_a_cancelled_step():
    s = diamond()
    s.start(1)
    assert s.cancel(1) is True
    assert s.state(2) is S and s.state(4) is S
    s.retry(1)
    assert s.state(1) is P and s.state(4) is P and s.start(1) == 2


# ------------------------------------------------------------------------------------------- cancelling
def test_cancel_pending_step_skips_downstream():
    s = diamond()
    assert s.cancel(5) is False
    assert s.state(5) is X and s.state(6) is S and s.ready() == [1]


def test_cancel_finished_step_is_rejected():
    s = diamond()
    run(s, 1)
    with pytest.raises(InvalidTransitionError, match=r"^cannot cancel step 1: it is completed"):
        s.cancel(1)


def test_cancel_all_returns_running_ids_and_finishes_the_plan():
    s = diamond()
    run(s, 1)
    s.start(2)
    s.start(5)
    assert s.cancel_all() == [2, 5]
    assert states(s) == {1: C, 2: X, 3: X, 4: X, 5: X, 6: X}
    assert s.is_done() and s.ready() == [] and s.running() == []
    with pytest.raises(StaleAttemptError):
        s.complete(2, "late", attempt=1)


def test_is_done_needs_seal():
    s = diamond(sealed=False)
    s.cancel_all()
    assert not s.is_done()
    s.seal()
    assert s.is_done()


# ------------------------------------------------------------------------------------------ checkpoints
def test_snapshot_is_json_and_restore_round_trips():
    s = diamond()
    run(s, 1, {"city": "Rome"})
    s.start(2)
    s.fail(2, "boom")
    s.start(3)
    snap = json.loads(json.dumps(s.snapshot()))
    r = Scheduler.restore(snap)
    assert r.snapshot() == s.snapshot()
    assert states(r) == states(s) and r.ready() == s.ready() == [5] and r.is_sealed
    assert r.attempt(3) == 1 and r.output(1) == {"city": "Rome"} and r.error(2) == "boom"
    r.complete(3, "ok", attempt=1)
    r.retry(2)
    assert r.ready() == [2, 5]


def test_restore_unsealed_with_forward_reference():
    s = Scheduler()
    s.add_step(2, [1])
    r = Scheduler.restore(s.snapshot())
    assert not r.is_sealed and r.ready() == []
    r.add_step(1)
    assert r.ready() == [1]


@pytest.mark.parametrize(("snap", "problem"), [
    ({"format": 7, "sealed": False, "steps": []}, "unknown format 7 (expected 1)"),
    ({"format": 1, "sealed": False}, "'steps'"),
    ({"format": 1, "sealed": False, "steps": [{"step_id": 1, "depends_on": [], "state": "done", "attempt": 0}]},
     "'done' is not a valid StepState"),
    ({"format": 1, "sealed": True, "steps": [{"step_id": 1, "depends_on": [2], "state": "pending", "attempt": 0}]},
     "step 1 depends on step 2, not in the plan; add it or remove it from depends_on"),
])
def test_restore_rejects_bad_snapshots(snap, problem):
    with pytest.raises(SnapshotError) as info:
        Scheduler.restore(snap)
    assert str(info.value) == (f"cannot restore the scheduler snapshot: {problem}; "
                               "pass a dict produced by Scheduler.snapshot()")


# ----------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("err", [
    CycleError((1, 2)), DuplicateStepError(3), SelfDependencyError(3), SchedulerSealedError(4),
    UnknownDependencyError(1, (5,)), NotReadyError(2, (1,)), UnknownStepError(9),
    InvalidTransitionError(1, "start", "running", "hint"), StaleAttemptError(1, 1, 2, "running"),
    SnapshotError("bad"), DagError("plain"),
])
def test_errors_pickle_with_their_data(err):
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is type(err) and str(copy) == str(err) and vars(copy) == vars(err)
    assert isinstance(copy, DagError)


def test_a_thousand_step_plan_schedules_without_a_blow_up():
    s = Scheduler()
    started = time.perf_counter()
    for sid in range(1, 1001):  # a wide-and-deep plan: each step depends on up to 3 earlier ones
        s.add_step(sid, [d for d in (sid - 1, sid - 7, sid // 2) if d >= 1 and d != sid])
    s.seal()
    order = []
    while not s.is_done():
        for sid in s.ready():
            s.start(sid)
            s.complete(sid, sid)
            order.append(sid)
    elapsed = time.perf_counter() - started
    assert sorted(order) == list(range(1, 1001))
    assert elapsed < 10, f"1,000 steps took {elapsed:.3f}s"  # a guard against a blow-up, not a speed target
