"""The killed driver's window (issue 39): a chain of writes whose driver's process group — with its private local
Ray — is SIGKILLed while step 3 works; Ray's workers outlive the driver for a moment, step 3 finishes in it, and
step 4 must not start there: it had not started at the kill, so the resume writes it exactly once. On both
store backends.

Step 4 works 3 s after its write, so a step 4 started in the window would be killed before recording its output,
and the resume would run it again after the claim's grace: ``t4`` twice. How long the workers outlive the driver
depends on the machine's load, so the window is not hit every run; tests/unit/cluster/test_driver_watch.py checks
the gate itself deterministically.
"""

from __future__ import annotations

from collections import Counter

import pytest
from support import crash_tools
from test_crash_matrix import _drive_and_kill

from agents import Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM
from agents.store import Store

pytestmark = pytest.mark.ray

SECONDS = "0.3,0.3,0.05,3"
"""Step 3 finishes 0.05 s after its write (inside the window: without the driver check, the old runner dispatched
step 4 in one of two runs here), step 4 works 3 s after its write (killed before it could record)."""


@pytest.mark.parametrize("ray_mode", ["private", pytest.param("shared", marks=pytest.mark.slow)])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_step_not_started_at_the_kill_is_written_once(ray_session, tmp_path, request, backend, ray_mode):
    store = str(tmp_path / "window.db") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    tags_file = tmp_path / "tags"
    address = None if ray_mode == "private" else ray_session.get_runtime_context().gcs_address
    task_id = _drive_and_kill(store, "chain", tags_file, "append_tag", "mid 3", address, seconds=SECONDS)
    with Store(store) as s:
        events = s.events(task_id)
    completed = {e.payload.step_id for e in events if e.type == "step_finished"}
    where = {"store_url": store} if backend == "postgresql" else {"store_path": store}
    orch = Orchestrator(llm=FunctionLLM(crash_tools.replanning_script), tools=crash_tools.TOOLS,
                        config=RuntimeConfig(**where, deployment={"num_executors": 2}))
    try:
        result = orch.resume(task_id).result(timeout=180)
    finally:
        orch.shutdown()
    assert result.status == "accepted", result.error
    writes = Counter(crash_tools.tags(tags_file))
    assert writes["t4"] == 1, f"step 4 had not started at the kill and must be written once: {writes}"
    assert writes["t1"] == writes["t2"] == 1 and writes["t3"] <= 2, writes
    assert all(writes[f"t{sid}"] == 1 for sid in completed), f"a step the store held completed ran again: {writes}"
