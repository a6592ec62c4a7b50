"""`make demo`: a real multi-step task, planned and checked by a real local model, run on local Ray.

The embedded default model (llama.cpp's OpenAI-compatible server on 127.0.0.1) plans the task; the
built-in tools (document search over the shipped corpus, calculator) run in parallel executors.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

DEMO_TASK = ("Using the document search tool, find the city-proper populations of Paris and Rome, "
             "then use the calculator to work out how many more people live in the larger of the two.")

__all__ = ["main", "DEMO_TASK"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.cli.demo")
    parser.add_argument("--task", default=DEMO_TASK)
    parser.add_argument("--model", default=None, help="local model name (see `tetrarch models list`)")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args(argv)

    from agents import Orchestrator, RuntimeConfig
    from agents.config import NUMERIC_QA_CHECKS
    from agents.cli.progress import ProgressView, render_result

    print("tetrarch demo — router, planner, executors and reflector as Ray actors, a real local model\n", flush=True)
    store = Path(tempfile.mkdtemp(prefix="tetrarch-demo-")) / "demo.db"
    # The demo asks a look-up-and-compute question over the bundled passages: the numeric check set's domain.
    cfg = RuntimeConfig(store_path=store, step_timeout_s=120, task_timeout_s=args.timeout, local_model=args.model,
                        builtin_checks=NUMERIC_QA_CHECKS)
    started = time.monotonic()
    orch = Orchestrator(llm=None, config=cfg)  # starts the embedded model server; shutdown() stops it
    print(f"started in {time.monotonic() - started:.1f}s: Ray, the model server, and a prefill of each role's "
          "static prompt (the tool list and its instructions), cached for every task\n", flush=True)
    try:
        handle = orch.submit(args.task)
        view = ProgressView()
        for event in handle.events():
            for line in view.feed(event):
                if line:
                    print(line, flush=True)
        result = handle.result(timeout=args.timeout)
        print("\n" + render_result(result))
        print(f"\nstore: {store}  (inspect with: tetrarch tasks --store {store})")
        return 0 if result.status in ("accepted", "clarify", "escalated") else 1
    finally:
        orch.shutdown()


if __name__ == "__main__":
    sys.exit(main())
