"""A driver for the crash tests: runs a task on its own private local Ray and reports progress on stdout, then
waits (the test SIGKILLs its whole process group at the chosen moment).

    driver_script.py STORE NOTE                      the original scenario: note, slow step, lookup
    driver_script.py STORE --plan SHAPE TAGFILE SECONDS TOOL    a crash-matrix task (support.crash_tools)

Without RAY_ADDRESS the driver starts a private local Ray (its process group holds the driver and that Ray).
Prints ``TASK <id>`` once submitted, then ``STARTED <step>`` / ``FINISHED <step>`` as events arrive."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support import (
    crash_tools,
    wire,
)
from support import tools as T

from agents import Orchestrator, RuntimeConfig
from agents.llm import FunctionLLM


def _original(note: str) -> tuple[str, list]:
    plan = wire.plan(wire.step(1, "append_note", {"note": note}),
                     wire.step(2, "sleepy", {"seconds": 3.0, "label": "slow"}, deps=[1]),
                     wire.step(3, "lookup", {"city": "Rome"}))
    return plan, T.ALL


def _store_config(store: str) -> dict:
    return {"store_url": store} if store.startswith("postgresql://") else {"store_path": Path(store)}


def main(argv: list[str]) -> None:
    import support
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(support)
    store = argv[1]  # a SQLite file, or a postgresql:// URL
    if argv[2] == "--plan":
        llm, tools = FunctionLLM(crash_tools.replanning_script), crash_tools.TOOLS
        task = crash_tools.task_text(argv[3], argv[4], argv[5], argv[6])
    else:
        plan, tools = _original(argv[2])
        llm, task = FunctionLLM(crash_tools.script(plan)), "write a note, wait, look up Rome"
    # RAY_ADDRESS (set by the crash matrix) joins the test's Ray: the kill then takes the driver and its job's
    # actors, not a whole private Ray, and each crash point skips a Ray start-up.
    orch = Orchestrator(llm=llm, tools=tools,
                        config=RuntimeConfig(**_store_config(store),
                                             deployment={"num_executors": 4, "ship_code": False}))
    handle = orch.submit(task)
    print(f"TASK {handle.task_id}", flush=True)
    for event in handle.events():
        if event.type == "step_started":
            print(f"STARTED {event.payload.step_id}", flush=True)
        elif event.type == "step_finished":
            print(f"FINISHED {event.payload.step_id}", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main(sys.argv)
