"""Subprocess side of the store's crash and multi-process tests (not a test module).

    python store_worker_script.py crash DB TASK_ID
        commits transitions in a loop, continuing from the stored checkpoint, and prints each
        acknowledged transition number; the parent SIGKILLs it at some moment.
    python store_worker_script.py mixed DB WRITER N
        prints "ready", waits for a line on stdin, then commits N transitions to its own task, records
        N LLM calls on the shared task "shared" and races for the journal keys k0..k{N-1}; prints a
        JSON summary of the journal keys it won.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agents.events import StepStartedPayload, TaskSubmittedPayload, make_event
from agents.store import Store

EVENTS_PER_TRANSITION = 3
BLOB_EVERY = 7


def transition_events(task_id: str, i: int) -> list:
    first = (i - 1) * EVENTS_PER_TRANSITION + 1
    return [make_event(StepStartedPayload(step_id=i, attempt=k + 1), task_id=task_id, seq=first + k, ts=float(i))
            for k in range(EVENTS_PER_TRANSITION)]


def big_output(i: int) -> dict:
    return {"i": i, "data": [f"row-{i}-{n}" for n in range(40_000)]}


def crash_loop(db: Path, task_id: str) -> None:
    store = Store(db, blob_threshold_bytes=4096)
    if store.get_task(task_id) is None:
        store.create_task(task_id, "crash test", {})
    i = store.checkpoint_version(task_id)
    print("ready", flush=True)
    while True:
        i += 1
        if i % BLOB_EVERY == 0:
            store.put_step_output(task_id, 1, i, 1, big_output(i))
        store.commit(task_id, transition_events(task_id, i),
                     checkpoint={"i": i, "last_seq": i * EVENTS_PER_TRANSITION, "pad": "x" * (i % 500)},
                     status="running")
        print(i, flush=True)


def mixed(db: Path, writer: str, n: int) -> None:
    store = Store(db)
    print("ready", flush=True)
    sys.stdin.readline()
    won = []
    for i in range(1, n + 1):
        store.commit(writer, [make_event(TaskSubmittedPayload(task=f"{writer}-{i}"), task_id=writer, seq=i, ts=0.0)],
                     checkpoint={"i": i}, status="running")
        store.record_llm_call("shared", {"role": "planner", "writer": writer, "i": i})
        if store.journal_put(f"k{i - 1}", "shared", {"writer": writer}):
            won.append(f"k{i - 1}")
    store.close()
    print(json.dumps({"writer": writer, "won": won}), flush=True)


if __name__ == "__main__":
    mode, db = sys.argv[1], Path(sys.argv[2])
    if mode == "crash":
        crash_loop(db, sys.argv[3])
    else:
        mixed(db, sys.argv[3], int(sys.argv[4]))
