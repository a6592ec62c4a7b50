"""The shard map is a pure function of the task id and the shard count: stable across processes, spread evenly."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

from agents.cluster.shards import shard_name, shard_names, shard_of


def test_one_shard_owns_everything_and_names_keep_the_plain_supervisor_name():
    assert {shard_of(f"t{i}", 1) for i in range(50)} == {0}
    assert shard_name("ab", 0) == "supervisor-ab" and shard_names("ab", 3)[2] == "supervisor-ab-s2"


def test_ids_spread_over_the_shards():
    counts = Counter(shard_of(f"{i:016x}", 4) for i in range(4000))
    assert set(counts) == {0, 1, 2, 3}
    assert max(counts.values()) < 1.15 * min(counts.values()), counts


def test_another_process_computes_the_same_shard():
    # str hashes are salted per process; the map must not be
    ids = [f"task-{i}" for i in range(20)]
    here = [shard_of(t, 5) for t in ids]
    code = ("from agents.cluster.shards import shard_of; "
            f"print([shard_of(t, 5) for t in {ids!r}])")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert there == str(here)


def test_extra_shards_spread_over_other_nodes_only_with_a_server_store(tmp_path):
    from agents.cluster.actor_set import _shard_placement
    from agents.cluster.placement import NodeView
    from agents.config import RuntimeConfig

    head, w1, w2, gone = (f"{i:02x}" * 28 for i in range(4))  # node ids are 28-byte hex strings
    nodes = [NodeView(head, True), NodeView(w1, True), NodeView(w2, True), NodeView(gone, False)]
    on_file = _shard_placement(RuntimeConfig(store_path=tmp_path / "s.db", supervisors=3), nodes, head)
    assert [(p["scheduling_strategy"].node_id, p["scheduling_strategy"].soft) for p in on_file] == [(head, False)] * 3
    served = _shard_placement(RuntimeConfig(store_url="postgresql://u@127.0.0.1:5432/d", supervisors=4), nodes, head)
    assert [(p["scheduling_strategy"].node_id, p["scheduling_strategy"].soft) for p in served] == [
        (head, False), (w1, True), (w2, True), (head, True)]
