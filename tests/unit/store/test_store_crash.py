"""A writer SIGKILLed at random moments never leaves a partial transition behind, and loses no
acknowledged commit: every checkpoint version has exactly its events, every blob row a whole file."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.store import Store

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))
from store_worker_script import BLOB_EVERY, EVENTS_PER_TRANSITION, big_output

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

KILLS = 10


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _run_and_kill(db: Path, delay_s: float) -> int:
    """Start the commit loop, SIGKILL it ``delay_s`` after it is ready; the last acknowledged transition."""
    proc = subprocess.Popen([sys.executable, str(HERE / "store_worker_script.py"), "crash", str(db), "t"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=_env())
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.strip() == "ready", proc.stderr.read() if proc.stderr else first
    time.sleep(delay_s)
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    acked = [int(line) for line in out.split()]
    return acked[-1] if acked else 0


def _check_consistent(db: Path, acknowledged: int) -> int:
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Store(db) as store:
        version = store.checkpoint_version("t")
        checkpoint = store.load_checkpoint("t")
        events = store.events("t")
        outputs = store.get_step_outputs("t")
    assert version >= acknowledged, "a commit the writer saw succeed was lost"
    if version == 0:
        assert checkpoint is None and events == []
        return 0
    assert checkpoint is not None and checkpoint["i"] == version
    assert [e.seq for e in events] == list(range(1, version * EVENTS_PER_TRANSITION + 1))
    assert events[-1].payload.step_id == version  # the last events are the checkpoint's own transition
    for (plan, step), output in outputs.items():
        assert (plan, step) == (1, step) and step % BLOB_EVERY == 0
        assert output == big_output(step)
    return version


def test_sigkill_at_random_moments_leaves_no_partial_transaction(tmp_path):
    db = tmp_path / "crash.db"
    rng = random.Random(20261107)
    versions = []
    for _ in range(KILLS):
        acknowledged = _run_and_kill(db, rng.uniform(0.0, 0.25))
        versions.append(_check_consistent(db, acknowledged))
    # Every run continued from the previous checkpoint and got somewhere.
    assert versions == sorted(versions) and versions[-1] > versions[0] > 0
    blobs = sorted((tmp_path / "crash.db.blobs" / "t").iterdir())
    assert blobs, "the loop should have written large outputs to blob files"
