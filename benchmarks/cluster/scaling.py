"""Scaling benchmark: throughput of concurrent tasks against worker nodes and executor-pool size, and the
Supervisor's own ceiling. Writes benchmarks/results/cluster.md, cluster.json and cluster.png.

    python -m benchmarks.cluster.scaling [--quick] [--out DIR]

Each point is a fresh ``ray.cluster_utils.Cluster`` (head + N worker raylets on this machine); the code is
shipped with the job's runtime_env as on a real cluster. The machine has 2 cores: extra raylets add no CPU,
so what this measures is that I/O-bound tool work scales with the number of executors (each runs blocking
tools on its own thread pool) and where the one Supervisor stops keeping up.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents import Deployment, Orchestrator, RuntimeConfig
from agents.cluster.deploy import build_runtime_env
from agents.llm.simulated import LatencyModel, SimulatedLLM
from benchmarks.cluster.local_cluster import local_cluster
from benchmarks.cluster.workload import TOOLS, gold_tasks

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parents[1] / "results"
# A served small model: 0.1 s to first token, fast decode; the LLM calls are async and overlap freely.
LLM_LATENCY = LatencyModel(ttft_s=0.1, decode_tokens_per_s=400, prefill_tokens_per_s=20_000)
INSTANT = LatencyModel(ttft_s=0.0, decode_tokens_per_s=1e9, prefill_tokens_per_s=1e9)
THREADS_PER_EXECUTOR = min(32, (os.cpu_count() or 1) + 4)
"""asyncio's default thread pool in an executor process: how many blocking tool calls one executor runs."""


@dataclass
class Point:
    kind: str
    nodes: int
    per_node: int
    pool: int
    tasks: int
    steps: int
    tool_latency_s: float
    wall_s: float
    tasks_per_s: float
    steps_per_s: float
    accepted: int
    median_task_s: float
    io_bound_tasks_per_s: float | None
    """What the executors' thread slots allow: pool × threads / (steps × latency)."""
    supervisor_cpu_s: float
    supervisor_cpu_ms_per_task: float
    machine_cpu_busy: float
    """Fraction of both cores busy during the run."""
    events_per_task: float


def _proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> tuple[float, float]:
    cpu = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = cpu[3] + cpu[4]
    return float(sum(cpu) - idle), float(sum(cpu))


def _measure(kind: str, nodes: int, per_node: int, tasks: int, steps: int, tool: str, latency_s: float,
             llm_latency: LatencyModel) -> Point:
    import ray

    prefix = f"{kind}-n{nodes}-e{per_node}"
    golds = gold_tasks(tasks, steps, tool, latency_s, prefix=prefix)
    warm = gold_tasks(per_node * nodes, steps, tool, latency_s, prefix=prefix + "-warm")
    store = Path(tempfile.mkdtemp(prefix="tetrarch-scaling-")) / "s.db"
    config = RuntimeConfig(store_path=store, max_steps=64, token_budget=None, max_llm_calls=None,
                           task_timeout_s=1800, step_timeout_s=600, deployment=Deployment(
                               namespace=f"scaling-{prefix}", executors_per_node=per_node, watch_nodes=False,
                               role_resources={"executor": {"exec": 1}}, executor_max_concurrency=256))
    orch = Orchestrator(llm=SimulatedLLM(golds + warm, llm_latency), tools=TOOLS, config=config)
    try:
        for h in [orch.submit(g.task) for g in warm]:  # start every executor's worker and thread pool
            h.result(timeout=600)
        pid = ray.get(orch._supervisor.pid.remote())
        cpu0, (busy0, total0) = _proc_cpu_s(pid), _machine_busy()
        started = time.perf_counter()
        handles = [orch.submit(g.task) for g in golds]
        results = [h.result(timeout=1800) for h in handles]
        wall = time.perf_counter() - started
        cpu1, (busy1, total1) = _proc_cpu_s(pid), _machine_busy()
        pool = len(orch._actors.executors)
    finally:
        orch.shutdown()
    with sqlite3.connect(store) as conn:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0] / (len(golds) + len(warm))
    io_bound = (pool * THREADS_PER_EXECUTOR / (steps * latency_s)) if tool == "fetch" and latency_s else None
    return Point(kind, nodes, per_node, pool, tasks, steps, latency_s, round(wall, 3), round(tasks / wall, 2),
                 round(tasks * steps / wall, 1), sum(r.status == "accepted" for r in results),
                 round(statistics.median(r.timings.wall_s for r in results), 3),
                 None if io_bound is None else round(io_bound, 2), round(cpu1 - cpu0, 2),
                 round((cpu1 - cpu0) / tasks * 1000, 2), round((busy1 - busy0) / max(1.0, total1 - total0), 3),
                 round(events, 1))


def store_commit_rate(n: int = 2000) -> dict[str, Any]:
    """SQLite commits per second for one event + a checkpoint of a finished 4-step task (what the
    Supervisor writes on every transition), in this process."""
    from agents.events import StepStartedPayload, TaskSubmittedPayload, make_event
    from agents.store import Store

    store = Store(Path(tempfile.mkdtemp(prefix="tetrarch-store-")) / "s.db")
    checkpoint = {"task_id": "t", "task": "x" * 200, "steps": {str(i): {"status": "completed", "attempts": 1,
                                                                        "started_at": 1.0, "finished_at": 2.0}
                                                                for i in range(4)},
                  "plan": {"steps": [{"step_id": i, "description": "call", "tool_name": "fetch",
                                      "tool_input": {"key": f"k{i}", "latency_s": 0.5}, "depends_on": []}
                                     for i in range(4)]}, "phase": "execute", "run": 1}
    tasks = max(1, n // 10)
    started = time.perf_counter()
    for t in range(tasks):
        task_id = f"t{t}"
        store.create_task(task_id, "task", {})
        store.commit(task_id, [make_event(TaskSubmittedPayload(task="task"), task_id=task_id, seq=1, ts=0.0)],
                     checkpoint, status="running")
        for seq in range(2, 11):
            store.commit(task_id, [make_event(StepStartedPayload(step_id=seq, attempt=1), task_id=task_id, seq=seq,
                                              ts=0.0)], checkpoint, status="running")
    elapsed = time.perf_counter() - started
    store.close()
    commits = tasks * 10
    return {"commits": commits, "seconds": round(elapsed, 3), "commits_per_s": round(commits / elapsed),
            "ms_per_commit": round(elapsed / commits * 1000, 3)}


def run(quick: bool, progress=print) -> dict[str, Any]:
    import ray

    node_counts = (1, 2, 4)
    per_nodes = (1, 2) if quick else (1, 2, 4)
    tasks, steps, latency = (24, 4, 0.5) if quick else (48, 4, 0.5)
    ceiling_tasks = 120 if quick else 300
    points: list[Point] = []
    for nodes in node_counts:
        with local_cluster([{"exec": 4}] * nodes) as (cluster, _workers):
            # One job per cluster; every Orchestrator below reuses it (and its shipped code).
            ray.init(address=cluster.address, namespace="scaling", log_to_driver=False, configure_logging=False,
                     runtime_env=build_runtime_env(TOOLS, SimulatedLLM([])))
            try:
                for per_node in per_nodes:
                    p = _measure("io", nodes, per_node, tasks, steps, "fetch", latency, LLM_LATENCY)
                    points.append(p)
                    progress(f"io       nodes={nodes} pool={p.pool:2}: {p.tasks_per_s:6.2f} tasks/s "
                             f"(I/O bound {p.io_bound_tasks_per_s}), supervisor {p.supervisor_cpu_ms_per_task} "
                             f"ms CPU/task, machine {p.machine_cpu_busy:.0%} busy")
                if nodes == 2:
                    for kind, tool, lat in (("async-io", "afetch", latency), ("ceiling", "noop", 0.0)):
                        n = ceiling_tasks if kind == "ceiling" else tasks
                        p = _measure(kind, nodes, 2, n, steps if kind != "ceiling" else 2, tool, lat,
                                     LLM_LATENCY if kind != "ceiling" else INSTANT)
                        points.append(p)
                        progress(f"{kind:8} nodes={nodes} pool={p.pool:2}: {p.tasks_per_s:6.2f} tasks/s, supervisor "
                                 f"{p.supervisor_cpu_ms_per_task} ms CPU/task, machine {p.machine_cpu_busy:.0%} busy")
            finally:
                ray.shutdown()
    store = store_commit_rate(1000 if quick else 3000)
    progress(f"store: {store['commits_per_s']} commits/s ({store['ms_per_commit']} ms each)")
    return {"generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "quick": quick,
            "cores": os.cpu_count(), "threads_per_executor": THREADS_PER_EXECUTOR,
            "llm_latency": LLM_LATENCY.describe(), "points": [asdict(p) for p in points], "store": store}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="tetrarch cluster scaling benchmark")
    parser.add_argument("--quick", action="store_true", help="fewer tasks and pool sizes (a few minutes)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--rerender", action="store_true", help="rewrite the report from OUT/cluster.json")
    args = parser.parse_args(argv)
    from benchmarks.cluster.scaling_report import render

    args.out.mkdir(parents=True, exist_ok=True)
    doc = json.loads((args.out / "cluster.json").read_text()) if args.rerender else run(args.quick)
    (args.out / "cluster.json").write_text(json.dumps(doc, indent=2) + "\n")
    render(doc, args.out)
    print(f"wrote {args.out / 'cluster.md'} and cluster.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
