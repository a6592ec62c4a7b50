"""System microbenchmarks on local Ray (no model latency: roles are scripted to answer at once).

- dispatch overhead per step: a plan of N no-op steps, (last finish - first dispatch) / N;
- makespan / critical-path bound on random 200-step DAGs of 100 ms tools;
- first dispatch after the planner's first streamed step (supervisor receive → executor dispatch);
- concurrent tasks one machine holds, and the Supervisor's memory per idle task.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import Deployment, Orchestrator, RuntimeConfig, tool
from agents.llm import FunctionLLM
from benchmarks.cluster.workload import noop
from dag.graph import critical_path

__all__ = ["main"]


@tool
async def wait(seconds: float, i: int) -> int:
    """Sleep, then return i.

    Args:
        seconds: How long to sleep.
        i: Any number.
    """
    import asyncio

    await asyncio.sleep(seconds)
    return i


def _script(plan_steps: list[dict[str, Any]], chunk: int | None = None) -> FunctionLLM:
    plan = json.dumps({"steps": plan_steps})
    accept = json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                         "action": "accept", "retry_details": None, "feedback": "", "answer": "ok"})
    route = json.dumps({"route": "plan", "confidence": 1.0, "reason": "", "answer": None})
    return FunctionLLM(lambda r: {"router": route, "planner": plan, "reflector": accept}[r.role],
                       stream_chunk_size=chunk)


def _orch(llm: FunctionLLM, max_steps: int, executors: int = 2) -> Orchestrator:
    store = Path(tempfile.mkdtemp(prefix="tetrarch-sysbench-")) / "s.db"
    return Orchestrator(llm=llm, tools=[noop, wait], config=RuntimeConfig(
        store_path=store, max_steps=max_steps, deployment=Deployment(num_executors=executors), token_budget=None,
        max_llm_calls=None, task_timeout_s=3600, context_token_budget=2_000_000))


def _span(result) -> float:
    if result.status != "accepted" or not result.steps:
        raise RuntimeError(f"a microbenchmark task ended {result.status} ({result.stopped_reason}) with "
                           f"{len(result.steps)} steps: {result.error}")
    return max(s.finished_at for s in result.steps) - min(s.started_at for s in result.steps)


def dispatch_overhead(n: int, repeats: int = 3) -> dict[str, Any]:
    """Median over ``repeats`` runs (after a warm-up) of (last finish - first dispatch) / n, n no-op steps."""
    steps = [{"step_id": i, "description": "", "tool_name": "noop", "tool_input": {"i": i}, "depends_on": []}
             for i in range(1, n + 1)]
    orch = _orch(_script(steps), n)
    try:
        orch.run("warm up", timeout=600)
        results = [orch.run(f"no-op fan-out {r}", timeout=600) for r in range(repeats)]
    finally:
        orch.shutdown()
    spans = [_span(result) for result in results]
    span = statistics.median(spans)
    recorded = statistics.median(_recorded_span(orch.config.store_path, r.task_id) for r in results)
    return {"steps": n, "span_s": round(span, 3), "per_step_ms": round(span / n * 1000, 3),
            "per_step_ms_runs": [round(s / n * 1000, 3) for s in spans],
            "recorded_per_step_ms": round(recorded / n * 1000, 3),
            "wall_s": round(statistics.median(r.timings.wall_s for r in results), 3)}


def _recorded_span(store_path: Path, task_id: str) -> float:
    """The Supervisor's side of the same run: its first ``step_started`` to its last ``step_finished`` event
    (when the last outcome was recorded, not only produced; the span above ends at the executor's clock)."""
    from agents.store import Store

    with Store(store_path) as store:
        events = store.events(task_id)
    started = min(e.ts for e in events if e.type == "step_started")
    return max(e.ts for e in events if e.type == "step_finished") - started


def random_dag(n: int, rng: random.Random, width: int = 12) -> list[dict[str, Any]]:
    steps = []
    for i in range(1, n + 1):
        k = rng.choice((0, 1, 1, 2, 3)) if i > 1 else 0
        deps = sorted(rng.sample(range(max(1, i - width), i), min(k, i - 1)))
        steps.append({"step_id": i, "description": "", "tool_name": "wait", "tool_input": {"seconds": 0.1, "i": i},
                      "depends_on": deps})
    return steps


def makespan_ratio(n: int, dags: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    ratios = []
    for d in range(dags):
        steps = random_dag(n, rng)
        orch = _orch(_script(steps), n, executors=2)
        try:
            result = orch.run(f"random dag {d}", timeout=900)
        finally:
            orch.shutdown()
        durations = {s.step_id: s.finished_at - s.started_at for s in result.steps}
        deps = {s["step_id"]: s["depends_on"] for s in steps}
        bound_measured = critical_path(deps, durations)[0]
        bound_ideal = critical_path(deps, {k: 0.1 for k in deps})[0]
        ratios.append({"makespan_s": round(_span(result), 3), "critical_path_measured_s": round(bound_measured, 3),
                       "critical_path_ideal_s": round(bound_ideal, 3),
                       "ratio_vs_measured": round(_span(result) / bound_measured, 4),
                       "ratio_vs_ideal": round(_span(result) / bound_ideal, 4)})
    return {"steps": n, "dags": dags, "runs": ratios,
            "median_ratio_vs_measured": statistics.median(r["ratio_vs_measured"] for r in ratios),
            "median_ratio_vs_ideal": statistics.median(r["ratio_vs_ideal"] for r in ratios)}


def first_dispatch(trials: int) -> dict[str, Any]:
    steps = [{"step_id": i, "description": "x" * 200, "tool_name": "noop", "tool_input": {"i": i}, "depends_on": []}
             for i in range(1, 21)]
    orch = _orch(_script(steps, chunk=40), 50)
    gaps = []
    try:
        for t in range(trials):
            events = list(orch.submit(f"stream {t}").events())
            got = next(e.ts for e in events if e.type == "plan_step" and e.payload.step.step_id == 1)
            started = next(e.ts for e in events if e.type == "step_started" and e.payload.step_id == 1)
            last_plan = max(e.ts for e in events if e.type == "plan_step")
            gaps.append({"dispatch_after_first_step_ms": round((started - got) * 1000, 3),
                         "dispatched_before_plan_end_ms": round((last_plan - started) * 1000, 3)})
    finally:
        orch.shutdown()
    return {"trials": trials, "runs": gaps,
            "median_ms": statistics.median(g["dispatch_after_first_step_ms"] for g in gaps)}


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def concurrent_tasks(n: int, hold_s: float = 20.0) -> dict[str, Any]:
    import ray

    # Every task holds one step open for hold_s, long enough for all n to be submitted and running at once.
    steps = [{"step_id": 1, "description": "", "tool_name": "wait", "tool_input": {"seconds": hold_s, "i": 1},
              "depends_on": []}]
    orch = _orch(_script(steps), 5)
    try:
        pid = ray.get(orch._supervisor.pid.remote())
        before = _rss_kb(pid)
        t0 = time.monotonic()
        handles = [orch.submit(f"idle task {i}") for i in range(n)]
        submit_s = time.monotonic() - t0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(ray.get(orch._supervisor.running_tasks.remote())) < n:
            time.sleep(0.2)
        time.sleep(1.0)
        during = _rss_kb(pid)
        running = len(ray.get(orch._supervisor.running_tasks.remote()))
        results = [h.result(timeout=300) for h in handles]
    finally:
        orch.shutdown()
    return {"tasks": n, "running_at_once": running, "accepted": sum(r.status == "accepted" for r in results),
            "submit_rate_per_s": round(n / submit_s, 1), "supervisor_rss_before_kb": before,
            "supervisor_rss_during_kb": during, "kb_per_idle_task": round((during - before) / n, 2)}


def _load() -> str:
    """The machine's load averages (1, 5, 15 min) when the measurement started: the figures depend on them."""

    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def dispatch_overhead_flat(sizes: Sequence[int] = (200, 1000)) -> dict[str, Any]:
    """Dispatch overhead per step at each plan length; flat means the work per step does not grow with it."""
    load = _load()
    runs = [dispatch_overhead(n) for n in sizes]
    per_step = [r["per_step_ms"] for r in runs]
    # What one more step costs, with the fixed cost per task (the first and last calls) taken out.
    marginal = (runs[-1]["span_s"] - runs[0]["span_s"]) / (runs[-1]["steps"] - runs[0]["steps"])
    return {"runs": runs, "spread": round(max(per_step) / min(per_step) - 1, 4), "load_at_start": load,
            "load_at_end": _load(), "marginal_per_step_ms": round(marginal * 1000, 3)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.system.run")
    p.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "results")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", choices=["dispatch", "throughput", "default", "cancel"],
                   help="run one measure and merge it into the stored results (throughput: also throughput.md; "
                        "default: only its default-configuration rows; cancel: only cancel.md)")
    p.add_argument("--as-before", metavar="CODE",
                   help="default: store the rows as the code before (CODE names it, e.g. a commit), shown beside")
    p.add_argument("--tasks", type=int, default=None, help="throughput: tasks per run (default 500, --quick 200)")
    args = p.parse_args(argv)
    q = args.quick
    path = args.out / "system.json"
    if args.only == "throughput":
        from benchmarks.system.throughput import markdown, run_all

        results = json.loads(path.read_text()) if path.exists() else {}
        before = results.get("throughput", {}).get("default_before")  # the code before, measured beside this
        results["throughput"] = {**run_all(tasks=args.tasks or (200 if q else 500)),
                                 **({"default_before": before} if before else {})}
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1) + "\n")
        (args.out / "throughput.md").write_text("\n".join(markdown(results["throughput"])) + "\n")
        print("\n".join(markdown(results["throughput"])))
        return 0
    if args.only == "cancel":
        from benchmarks.system.cancel_latency import markdown as cancel_md
        from benchmarks.system.cancel_latency import run_all as cancel_all

        md = cancel_md(cancel_all(repeats=3 if q else 10))
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "cancel.md").write_text("\n".join(md) + "\n")
        print("\n".join(md))
        return 0
    if args.only == "default":
        from benchmarks.system.throughput import markdown, run_default

        results = json.loads(path.read_text()) if path.exists() else {}
        rows = run_default(args.tasks or (300 if q else 1000), repeats=1 if q else 3)
        kept = results.setdefault("throughput", {"runs": [], "cores": os.cpu_count()})
        if args.as_before:
            kept["default_before"] = [{**r, "code": args.as_before} for r in rows]
        else:
            kept["default"] = rows
        kept["default_generated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=1) + "\n")
        if "generated_at" in kept:
            (args.out / "throughput.md").write_text("\n".join(markdown(kept)) + "\n")
        print(json.dumps(rows, indent=1))
        return 0
    if args.only == "dispatch":
        results = json.loads(path.read_text()) if path.exists() else {}
        results["dispatch_overhead"] = dispatch_overhead_flat()
        results["dispatch_generated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    else:
        results = {
            "dispatch_overhead": dispatch_overhead_flat(),
            "makespan_vs_critical_path": makespan_ratio(60 if q else 200, 1 if q else 3, seed=3),
            "first_dispatch": first_dispatch(3 if q else 10),
            "concurrent_tasks": concurrent_tasks(100 if q else 200, hold_s=8.0 if q else 20.0),
            "quick": q,
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1) + "\n")
    md = _markdown(results)
    (args.out / "system.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


def _markdown(results: dict[str, Any]) -> list[str]:
    d, m, f, c = (results[k] for k in ("dispatch_overhead", "makespan_vs_critical_path", "first_dispatch",
                                       "concurrent_tasks"))
    q = results.get("quick", False)
    md = ["# System microbenchmarks (local Ray, 2 cores)", "", f"Generated {results['generated_at']}"
          f"{' (quick)' if q else ''} by `python -m benchmarks.system.run`"
          + (f"; dispatch overhead re-measured {results['dispatch_generated_at']} (`--only dispatch`)"
             if "dispatch_generated_at" in results else "") + ".", "",
          "| measure | result | target |", "|---|---|---|"]
    md += [f"| dispatch overhead per step ({r['steps']} no-op steps; median of "
           f"{', '.join(f'{x:.2f}' for x in r.get('per_step_ms_runs', [r['per_step_ms']]))}) | "
           f"{r['per_step_ms']:.2f} ms | ≤ 2 ms |" for r in d["runs"]]
    md += [(f"| dispatch overhead, {d['runs'][-1]['steps']} vs {d['runs'][0]['steps']} steps | "
            f"{d['spread'] * 100:.0f}% apart (load average {d['load_at_start']} at the start, "
            f"{d.get('load_at_end', '?')} at the end) | within 20% |")]
    if "marginal_per_step_ms" in d:
        md += [(f"| (extra) marginal cost of one more step, {d['runs'][0]['steps']} → {d['runs'][-1]['steps']} steps |"
                f" {d['marginal_per_step_ms']:.2f} ms | — |")]
        md += [(f"| (extra) recorded by the Supervisor per step ({r['steps']} steps; first step_started to last "
                f"step_finished event) | {r['recorded_per_step_ms']:.2f} ms | — |") for r in d["runs"]]
    md += [
           (f"| makespan / critical-path bound ({m['steps']}-step random DAGs, 100 ms tools, 2 executors) | "
            f"{m['median_ratio_vs_measured']:.3f} (vs measured step times), {m['median_ratio_vs_ideal']:.3f} "
            f"(vs 100 ms each) | ≤ 1.05 |"),
           f"| first dispatch after the planner's first step reaches the Supervisor | {f['median_ms']:.1f} ms | ≤ 20 ms |",
           (f"| concurrent tasks held | {c['running_at_once']} running at once ({c['accepted']}/{c['tasks']} "
            f"accepted) | ≥ 200 |"),
           f"| Supervisor memory per idle task | {c['kb_per_idle_task']:.0f} KB | ≤ 1 MB |"]
    return md


if __name__ == "__main__":
    raise SystemExit(main())
