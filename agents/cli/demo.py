"""`make demo`: a real multi-step task, planned and checked by a real local model, run on local Ray (or, with
``--runtime inprocess``, in this process).

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
    parser.add_argument("--runtime", choices=("ray", "inprocess"), default="ray",
                        help="ray: the roles as Ray actors (default); inprocess: every role in this process, no Ray")
    args = parser.parse_args(argv)

    from agents import Deployment, Orchestrator, RuntimeConfig
    from agents.config import NUMERIC_QA_CHECKS
    from agents.cli.progress import ProgressView, render_result
    from agents.llm.local import get_model, pull
    from agents.llm.local.server import prefill_state_dir

    where = "as Ray actors" if args.runtime == "ray" else "in this process"
    print(f"tetrarch demo — router, planner, executors and reflector {where}, a real local model\n", flush=True)
    model = get_model(args.model)
    pull(model.name)  # verified weights: a no-op once installed (a stamp is checked, not the 1 GB file)
    kept = prefill_state_dir(model.name, model.sha256, model.n_ctx)
    warm = kept.is_dir() and any(kept.rglob("*.state"))
    store = Path(tempfile.mkdtemp(prefix="tetrarch-demo-")) / "demo.db"
    # No Ray dashboard: its processes start with Ray and compete with the model for the two cores; a user's own
    # Orchestrator keeps Ray's defaults. The demo asks a look-up-and-compute question over the bundled passages:
    # the numeric check set's domain.
    cfg = RuntimeConfig(store_path=store, step_timeout_s=120, task_timeout_s=args.timeout,
                        deployment=Deployment(ray_init_kwargs={"include_dashboard": False}),
                        builtin_checks=NUMERIC_QA_CHECKS)
    started = time.monotonic()
    orch = Orchestrator(llm=model, config=cfg, runtime=args.runtime)  # starts the model server; shutdown() stops it
    prefill = ("each role's static prompt loaded from the last run" if warm else
               "a prefill of each role's static prompt (the tool list and its instructions), kept for the next run")
    ray = "Ray, " if args.runtime == "ray" else ""
    print(f"started in {time.monotonic() - started:.1f}s: {ray}the model server, and {prefill}\n", flush=True)
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
