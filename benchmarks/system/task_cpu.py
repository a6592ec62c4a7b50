"""CPU per task without Ray: the engine, the store and the roles in one process, as a profile harness.

``python -m benchmarks.system.task_cpu --tasks 300 [--runs 3] [--profile]`` runs ``tasks`` one-step tasks
through ``Orchestrator(runtime="inprocess")`` with the throughput benchmark's zero-latency scripted model and
instant tool (``benchmarks.system.throughput``), on a SQLite store in a temporary directory, and prints the CPU
milliseconds this process spent per task (``time.process_time``: every thread, so a busy machine slows the run
but does not add to the figure). ``--profile`` adds a cProfile of one run, top 30 by cumulative and by own time.

What it measures is the product's own per-task cost (engine + store + roles); the Ray benchmark adds the
actor calls' serialisation and scheduling on top. Results: ``benchmarks/results/task-cpu.md`` (main at
faff6f2, the baseline: 11.18 CPU ms/task in-process, median of 3 runs of 300 tasks on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import Deployment, Orchestrator, RuntimeConfig
from benchmarks.cluster.workload import noop
from benchmarks.system.throughput import _script

__all__ = ["measure", "main"]


def _orch(root: Path) -> Orchestrator:
    config = RuntimeConfig(store_path=root / "s.db", deployment=Deployment(num_executors=2), token_budget=None,
                           max_llm_calls=None)
    return Orchestrator(llm=_script(), tools=[noop], config=config, runtime="inprocess")


def _on_loop(orch: Orchestrator, fn: Callable[[], object]) -> None:
    """Run ``fn`` on the in-process Supervisor's loop thread and wait: cProfile sees only the thread that enables
    it, and that thread runs the engine, the store and the roles (the driver thread only submits and waits)."""
    loop = orch._backend._loop  # type: ignore[attr-defined]
    done = threading.Event()
    loop.call_soon_threadsafe(lambda: (fn(), done.set()))
    done.wait(30)


def measure(tasks: int, profile: cProfile.Profile | None = None) -> dict[str, Any]:
    """One run: a warm-up of 10 tasks, then ``tasks`` submitted at once and every result read."""
    with tempfile.TemporaryDirectory(prefix="tetrarch-task-cpu-") as tmp, _orch(Path(tmp)) as orch:
        for handle in [orch.submit(f"warm-up {i}") for i in range(10)]:
            handle.result(timeout=120)
        if profile is not None:
            _on_loop(orch, profile.enable)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        handles = [orch.submit(f"task {i}") for i in range(tasks)]
        results = [h.result(timeout=900) for h in handles]
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        if profile is not None:
            _on_loop(orch, profile.disable)
    accepted = sum(r.status == "accepted" for r in results)
    if accepted != tasks:
        raise RuntimeError(f"{tasks - accepted} of {tasks} tasks were not accepted: "
                           f"{[r.stopped_reason for r in results if r.status != 'accepted'][:3]}")
    return {"tasks": tasks, "cpu_ms_per_task": round(cpu * 1000 / tasks, 3), "wall_s": round(wall, 2)}


def _top(profile: cProfile.Profile, key: str, n: int = 30) -> str:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats(key).print_stats(n)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--runs", type=int, default=1, help="runs to take the median of")
    parser.add_argument("--profile", action="store_true", help="cProfile one more run (it then runs slower)")
    parser.add_argument("--profile-out", type=Path, help="also write that profile's stats here (pstats)")
    args = parser.parse_args(argv)
    runs = [measure(args.tasks) for _ in range(args.runs)]
    for r in runs:
        print(f"{r['tasks']} tasks: {r['cpu_ms_per_task']:.2f} CPU ms/task ({r['wall_s']} s wall)")
    if args.runs > 1:
        print(f"median: {statistics.median(r['cpu_ms_per_task'] for r in runs):.2f} CPU ms/task")
    if args.profile:
        # CPU time of the profiled thread, not wall time: on a loaded machine a wall clock charges other
        # processes' turns to whatever function was running when they preempted this one.
        profile = cProfile.Profile(time.thread_time)
        measure(args.tasks, profile)
        print(_top(profile, "cumulative"))
        print(_top(profile, "tottime"))
        if args.profile_out is not None:
            profile.dump_stats(args.profile_out)


if __name__ == "__main__":
    main()
