"""A driver process for the driver-kill test: submits a task whose second step is slow, prints the task id
once step 1 is done, then waits (the test SIGKILLs it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support import tools as T  # noqa: E402
from support import wire  # noqa: E402

from agents import Orchestrator, RuntimeConfig  # noqa: E402
from agents.llm import FunctionLLM  # noqa: E402

PLAN = wire.plan(wire.step(1, "append_note", {"note": sys.argv[2]}),
                 wire.step(2, "sleepy", {"seconds": 3.0, "label": "slow"}, deps=[1]),
                 wire.step(3, "lookup", {"city": "Rome"}))


def script(request):
    return {"router": wire.route(), "planner": PLAN, "reflector": wire.reflection(answer="resumed fine")}[request.role]


if __name__ == "__main__":
    import support
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(support)
    orch = Orchestrator(llm=FunctionLLM(script), tools=T.ALL, config=RuntimeConfig(store_path=Path(sys.argv[1])))
    handle = orch.submit("write a note, wait, look up Rome")
    for event in handle.events():
        if event.type == "step_finished" and event.payload.step_id == 1:
            print(f"TASK {handle.task_id}", flush=True)
            break
    time.sleep(600)
