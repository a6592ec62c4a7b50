"""Event seq rules: each commit must continue the stored log exactly; a rejected commit writes nothing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.events import RoutedPayload, make_event
from agents.store import EventSequenceError, Store
from support.tiers import examples


def routed(seq: int, task_id: str = "t"):
    return make_event(RoutedPayload(route="plan", confidence=0.9), task_id=task_id, seq=seq, ts=float(seq))


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.db") as s:
        s.create_task("t", "x", {})
        yield s


@pytest.mark.parametrize("seqs, expected, got", [
    ([2], 1, 2),          # gap before the first event
    ([0], 1, 0),          # seq numbers start at 1
    ([1, 3], 2, 3),       # gap inside a batch
    ([1, 1], 2, 1),       # duplicate inside a batch
    ([2, 1], 1, 2),       # out of order
])
def test_bad_first_batches_are_rejected_whole(store, seqs, expected, got):
    with pytest.raises(EventSequenceError) as info:
        store.commit("t", [routed(s) for s in seqs], checkpoint={"x": 1}, status="running")
    assert (info.value.expected, info.value.got) == (expected, got)
    assert f"event seq {got} of task 't'" in str(info.value) and "Store.last_seq(task_id) + 1" in str(info.value)
    assert store.last_seq("t") == 0 and store.checkpoint_version("t") == 0
    assert store.get_task("t").status == "submitted"


def test_duplicate_of_a_stored_event_is_rejected(store):
    store.commit("t", [routed(1), routed(2)], checkpoint={"v": 1})
    with pytest.raises(EventSequenceError, match="expected 3"):
        store.commit("t", [routed(2)], checkpoint={"v": 2})
    assert store.load_checkpoint("t") == {"v": 1} and store.checkpoint_version("t") == 1


def test_seqs_are_per_task(store):
    store.create_task("u", "y", {})
    store.commit("t", [routed(1), routed(2)])
    store.commit("u", [routed(1, "u")])
    assert (store.last_seq("t"), store.last_seq("u"), store.last_seq("nobody")) == (2, 1, 0)


@settings(max_examples=examples(60), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(st.integers(0, 4), min_size=0, max_size=4), min_size=1, max_size=8))
def test_store_matches_a_model_of_the_log(tmp_path_factory, batches):
    """Each batch is a list of offsets from the next expected seq (0 = correct); the store accepts a batch
    exactly when the model says it is contiguous, and its log always equals the model's."""
    with Store(tmp_path_factory.mktemp("h") / "h.db") as store:
        store.create_task("t", "x", {})
        log: list[int] = []
        version = 0
        for offsets in batches:
            nxt = len(log) + 1
            seqs = [nxt + i + off for i, off in enumerate(offsets)]
            valid = all(off == 0 for off in offsets)
            if valid:
                store.commit("t", [routed(s) for s in seqs], checkpoint={"log": seqs})
                log.extend(seqs)
                version += 1
            else:
                with pytest.raises(EventSequenceError):
                    store.commit("t", [routed(s) for s in seqs], checkpoint={"log": seqs})
            assert [e.seq for e in store.events("t")] == log
            assert store.checkpoint_version("t") == version
