"""A driver for the crash and cancel tests: runs a task on its own private local Ray (or in process) and
reports progress on stdout, then waits (the test SIGKILLs its whole process group at the chosen moment).

    driver_script.py STORE NOTE                      the original scenario: note, slow step, lookup
    driver_script.py STORE --plan SHAPE TAGFILE SECONDS TOOL [--runtime R] [--hold ROLE] [--executors N]
                                                     a crash-matrix task (support.crash_tools)

Without RAY_ADDRESS the driver starts a private local Ray (its process group holds the driver and that Ray);
``--runtime inprocess`` runs the task in this process, no Ray. ``--hold ROLE`` makes that role's model call
wait (60 s, as a slow model would), after writing the role's name to ``TAGFILE.held``: the cancel matrix
cancels the task during that call. Prints ``TASK <id>`` once submitted, then ``STARTED <step>`` /
``FINISHED <step>`` as events arrive. A line ``CANCEL <by>`` on stdin cancels the task from this process
(``handle.cancel(by=...)``) and prints ``OUTCOME <CancelOutcome as JSON>``."""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
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

HOLD_S = 60.0
"""How long a held role's model call waits: far longer than any test waits before it cancels."""


def _original(note: str) -> tuple[str, list]:
    plan = wire.plan(wire.step(1, "append_note", {"note": note}),
                     wire.step(2, "sleepy", {"seconds": 3.0, "label": "slow"}, deps=[1]),
                     wire.step(3, "lookup", {"city": "Rome"}))
    return plan, T.ALL


def _store_config(store: str) -> dict:
    return {"store_url": store} if store.startswith("postgresql://") else {"store_path": Path(store)}


def _holding(role: str, marker: str):
    """``crash_tools.replanning_script`` whose ``role`` waits ``HOLD_S`` before it answers (a slow model call,
    stopped only by a cancel); it notes in ``marker`` that the call is under way."""
    async def reply(request):
        if request.role == role:
            Path(marker).write_text(role)
            await asyncio.sleep(HOLD_S)
        return crash_tools.replanning_script(request)
    return reply


def _cancel_on_stdin(handle) -> None:
    """Cancel the task from this process when the test says so (the in-process half of the cancel matrix)."""
    for line in sys.stdin:
        if line.startswith("CANCEL "):
            outcome = handle.cancel(by=line.removeprefix("CANCEL ").strip())
            print(f"OUTCOME {outcome.model_dump_json()}", flush=True)


def main(argv: list[str]) -> None:
    import support
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(support)
    store = argv[1]  # a SQLite file, or a postgresql:// URL
    runtime, executors = "ray", 4
    if argv[2] == "--plan":
        p = argparse.ArgumentParser(prog="driver_script.py STORE --plan SHAPE TAGFILE SECONDS TOOL")
        p.add_argument("--runtime", choices=["ray", "inprocess"], default="ray")
        p.add_argument("--hold", choices=["router", "planner", "reflector"], default=None)
        p.add_argument("--executors", type=int, default=4)
        opts = p.parse_args(argv[7:])
        runtime, executors = opts.runtime, opts.executors
        script = crash_tools.replanning_script
        if opts.hold is not None:
            script = _holding(opts.hold, f"{argv[4]}.held")
        llm, tools = FunctionLLM(script), crash_tools.TOOLS
        task = crash_tools.task_text(argv[3], argv[4], argv[5], argv[6])
    else:
        plan, tools = _original(argv[2])
        llm, task = FunctionLLM(crash_tools.script(plan)), "write a note, wait, look up Rome"
    # RAY_ADDRESS (set by the crash matrix) joins the test's Ray: the kill then takes the driver and its job's
    # actors, not a whole private Ray, and each crash point skips a Ray start-up.
    orch = Orchestrator(llm=llm, tools=tools, runtime=runtime,
                        config=RuntimeConfig(**_store_config(store),
                                             deployment={"num_executors": executors, "ship_code": False}))
    handle = orch.submit(task)
    print(f"TASK {handle.task_id}", flush=True)
    threading.Thread(target=_cancel_on_stdin, args=(handle,), daemon=True).start()
    for event in handle.events():
        if event.type == "step_started":
            print(f"STARTED {event.payload.step_id}", flush=True)
        elif event.type == "step_finished":
            print(f"FINISHED {event.payload.step_id}", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main(sys.argv)
