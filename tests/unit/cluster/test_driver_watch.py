"""The driver-loss gate: a runner whose driver is gone gets no claim for a write and loses the task's lease, so
its Supervisor's next write stops it; the watch calls back once when the driver goes (no Ray session needed)."""

from __future__ import annotations

import threading

import pytest

from agents.cluster.actors import JournalActor
from agents.cluster.driver_watch import DRIVER_LOST, DriverWatch
from agents.idempotency import ClaimState, Fence
from agents.store import LeaseLostError, Store, TaskBatch
from agents.store.fencing import Claimed


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.db"
    with Store(path) as store:
        store.create_task("t", "task", {})
        store.acquire_lease("t", "supervisor-a")
    return path


def test_a_claim_while_the_driver_lives_is_granted(db):
    journal = JournalActor(str(db), alive=lambda: True)
    assert journal.claim("t:k", Fence(1, 0, "exec-0")).state is ClaimState.CLAIMED


def test_a_runner_that_lost_its_driver_gets_no_claim_and_loses_the_lease(db):
    journal = JournalActor(str(db), alive=lambda: False)
    reply = journal.claim("t:k", Fence(1, 0, "exec-0"))
    assert reply.state is ClaimState.LEASE_LOST and reply.detail == DRIVER_LOST
    with Store(db) as store:
        with pytest.raises(LeaseLostError):  # the old Supervisor's next write stops its runner
            store.write_batch(TaskBatch("t", 1, checkpoint=(0, {"phase": "execute"})))
        assert store.acquire_lease("t", "resumer") == 3  # a resume takes the task over as usual
        assert store.journal_claim("t:k", "t", Fence(3, 0, "exec-1"), grace_s=5.0) == Claimed()


def test_revoking_an_owner_fences_only_its_own_tasks(db):
    with Store(db) as store:
        store.create_task("u", "other", {})
        store.acquire_lease("u", "supervisor-b")
        assert store.revoke_owner("supervisor-a", DRIVER_LOST) == ["t"]
        assert store.revoke_lease("u", 2, DRIVER_LOST) is False  # generation 2 never held "u"
        store.write_batch(TaskBatch("u", 1, checkpoint=(0, {"phase": "route"})))
        with pytest.raises(LeaseLostError):
            store.write_batch(TaskBatch("t", 1, checkpoint=(0, {"phase": "route"})))


def test_the_watch_calls_back_once_when_the_driver_goes():
    answers = iter([True, True, False, False])
    lost = threading.Event()
    calls = []
    watch = DriverWatch(lambda: (calls.append(1), lost.set()), interval_s=0.01, alive=lambda: next(answers)).start()
    assert lost.wait(5)
    watch.stop()
    watch._thread.join(5)
    assert calls == [1]


def test_a_slow_gcs_is_asked_again_and_only_silence_past_the_patience_means_gone():
    from agents.cluster.driver_watch import driver_alive

    now = [0.0]

    def clock() -> float:
        return now[0]

    def answers(seq):  # type: ignore[no-untyped-def]
        it = iter(seq)

        def ask(timeout_s: float):  # type: ignore[no-untyped-def]
            now[0] += timeout_s  # each unanswered question costs its deadline
            return next(it)
        return ask

    # two missed deadlines on a loaded machine, then an answer: alive (it used to count as gone)
    assert driver_alive(2.0, 20.0, ask=answers([None, None, True]), clock=clock, sleep=lambda s: None) is True
    now[0] = 0.0
    assert driver_alive(2.0, 20.0, ask=answers([None, False]), clock=clock, sleep=lambda s: None) is False  # the GCS says dead
    now[0] = 0.0
    assert driver_alive(2.0, 5.0, ask=answers([None] * 10), clock=clock, sleep=lambda s: None) is False  # silent past the patience
    assert now[0] == 10.0  # five questions: time alone (a starved thread) is not silence

    def starved(timeout_s: float):  # type: ignore[no-untyped-def]
        now[0] += 30.0  # the machine did not run the asking thread for 30 s
        return None if now[0] < 100 else True
    now[0] = 0.0
    assert driver_alive(2.0, 20.0, ask=starved, clock=clock, sleep=lambda s: None) is True
