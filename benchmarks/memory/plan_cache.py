"""The plan-cache benchmark (issue 22): tetrarch with and without ``RuntimeConfig(plan_cache=True)``, side by side
in one run, on a warm-up half the cache learns from and a held-out half of *other* tasks of the same kinds; with
the cache, its speculated reads on and off (``ToolPolicy.speculate_reads``, issue 63), and native ReAct with
parallel calls beside them.

    python -m benchmarks.memory.plan_cache [--quick] [--out benchmarks/results]     # or: tetrarch bench --plan-cache

Three Orchestrators share one local Ray, the tools (seeded latencies) and the simulated LLM (the project's latency
model): ``no_cache``, ``plan_cache_nospec`` and ``plan_cache``, each with its own store; ``react_parallel`` runs
the ReAct agent with native parallel calls on the same LLM and tools. Every task runs on all four, interleaved task
by task with the order rotated, warm-up half first, then the held-out half. The caches start empty for each suite.
Accuracy is judged on what the plan computed (``benchmarks.suite.final_output_correct``: the final steps'
outputs against the gold number computed from the world), since the simulated LLM writes the gold answer text
whatever the steps returned. Suites: ``plan-cache`` (reuse should happen) and ``plan-cache-shapes`` (held-out
shapes the warm-up never saw: reuse should not happen, and must not hurt).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.llm.simulated import DEFAULT_LATENCY, LatencyModel
from benchmarks.memory.plan_cache_report import (
    CACHE_SYSTEMS,
    PHASES,
    STEM,
    CacheBench,
    CacheSystem,
    from_jsonable,
    headline,
    write_plan_cache_report,
)
from agents.config import ToolPolicy
from benchmarks.runner import (RunRecord, bench_config, bench_llm, bench_tools, plan_times, react_agent,
                               record_run)
from benchmarks.suite import PLAN_CACHE_SUITES, BenchTask, final_output_correct, load_suite

__all__ = ["lookup_times_ms", "main", "run_plan_cache", "select"]

QUICK_PER_KIND = 1
QUICK_SCALE = 0.25
RESULTS = Path(__file__).resolve().parents[1] / "results"


def select(suite: str, split: str, per_kind: int | None) -> list[BenchTask]:
    """The split's tasks, at most ``per_kind`` of each kind, kinds interleaved (a short run covers them all)."""
    tasks = load_suite(suite, split=split)
    if per_kind is None:
        return tasks
    taken: dict[str, int] = {}
    out = []
    for task in tasks:
        if taken.get(task.kind, 0) < per_kind:
            taken[task.kind] = taken.get(task.kind, 0) + 1
            out.append(task)
    return out


def lookup_times_ms(store: Path, tasks: Sequence[BenchTask]) -> list[float]:
    """How long the cache takes to answer each task (a fresh connection, as the Supervisor's first lookup)."""
    from agents.memory import PlanCacheStore

    cache = PlanCacheStore(store)
    try:
        times = []
        for task in tasks:
            t0 = time.perf_counter()
            cache.lookup(task.text)
            times.append((time.perf_counter() - t0) * 1000)
        return times
    finally:
        cache.close()


def _judge(record: RunRecord, task: BenchTask, result: Any, cache_mode: str | None, phase: str) -> RunRecord:
    depended = {d for s in (result.plan.steps if result.plan else []) for d in s.depends_on}
    finals = [s.output for s in result.steps if s.step_id not in depended and s.status == "completed"]
    return replace(record, correct=final_output_correct(task, result.status, finals), phase=phase,
                   plan_cache=cache_mode)


def _run_cached(orch: Any, task: BenchTask) -> tuple[Any, dict[int, float], str | None, int]:
    """``benchmarks.runner.run_tetrarch``'s plan measures (``plan_times``), and how many steps a speculated call
    served."""
    handle = orch.submit(task.text)
    result = handle.result(timeout=900)
    events = list(handle.events())
    emitted, cache_mode = plan_times(events)
    served = sum(e.type == "step_finished" and e.payload.speculative for e in events)
    return result, emitted, cache_mode, served


def _run_one(system: CacheSystem, orchs: dict[CacheSystem, Any], react: Any, task: BenchTask, suite: str,
             llm_kind: str, phase: str) -> tuple[RunRecord, int]:
    """The run's record and how many of its steps a speculated call served."""
    if system == "react_parallel":
        result = asyncio.run(react().run(task.text))  # a fresh agent per task: each asyncio.run is a new loop
        return _judge(record_run(suite, task, system, 0, result, llm_kind), task, result, None, phase), 0
    result, emitted, mode, served = _run_cached(orchs[system], task)
    return _judge(record_run(suite, task, system, 0, result, llm_kind, emitted), task, result, mode, phase), served


def _run_suite(suite: str, orchs: dict[CacheSystem, Any], react: Any, stores: dict[CacheSystem, Path],
               tasks: dict[str, list[BenchTask]], llm_kind: str, progress: Callable[[str], None],
               speculated: dict[str, int]) -> list[RunRecord]:
    from agents.memory import PlanCacheStore

    for system in ("plan_cache_nospec", "plan_cache"):
        cleared = PlanCacheStore(stores[system])
        cleared.clear()  # each suite starts from an empty cache
        cleared.close()
    records: list[RunRecord] = []
    i = 0
    n = len(CACHE_SYSTEMS)
    for phase in PHASES:
        for task in tasks[phase]:
            order = CACHE_SYSTEMS[i % n:] + CACHE_SYSTEMS[:i % n]
            i += 1
            for system in order:
                rec, served = _run_one(system, orchs, react, task, suite, llm_kind, phase)
                records.append(rec)
                if served:
                    speculated[f"{system}/{task.id}"] = served
                progress(f"  {suite} {phase:7} {task.id:26} {system:17} {rec.status:9} "
                         f"cache {rec.plan_cache or '-':6} spec {served} right {rec.correct!s:5} "
                         f"wall {rec.wall_s:5.2f}s "
                         f"calls {rec.llm_calls}  in {rec.input_tokens:5}  out {rec.output_tokens:4}")
    return records


def run_plan_cache(suites: Sequence[str] = PLAN_CACHE_SUITES, *, per_kind: int | None = None,
                   latency: LatencyModel = DEFAULT_LATENCY, time_scale: float = 1.0, seed: int = 0,
                   quick: bool = False, progress: Callable[[str], None] = print) -> list[CacheBench]:
    """Run every suite under both systems (see the module's docstring); one ``CacheBench`` per suite."""
    import ray

    from agents import Orchestrator
    from agents.memory import PlanCacheStore

    chosen = {s: {phase: select(s, phase, per_kind) for phase in PHASES} for s in suites}
    every = [t for by_phase in chosen.values() for ts in by_phase.values() for t in ts]
    llm, llm_kind, latency_desc = bench_llm(every, None, latency, time_scale)
    tools = bench_tools(suites[0], seed=seed, scale=time_scale)
    root = Path(tempfile.mkdtemp(prefix="tetrarch-bench-plan-cache-"))
    tetrarchs: tuple[CacheSystem, ...] = ("no_cache", "plan_cache_nospec", "plan_cache")
    stores: dict[CacheSystem, Path] = {s: root / f"{s}.db" for s in tetrarchs}
    owns_ray = not ray.is_initialized()
    orchs: dict[CacheSystem, Any] = {}
    out = []
    try:
        for system in tetrarchs:
            config = bench_config(stores[system], plan_cache=system != "no_cache",
                                  tools=ToolPolicy(speculate_reads=system == "plan_cache"))
            orchs[system] = Orchestrator(llm=llm, tools=tools, config=config)
        react_config = bench_config(root / "react.db")
        react = lambda: react_agent("react_parallel", llm, tools, react_config)  # noqa: E731
        for suite in suites:
            progress(f"== plan cache: suite {suite} ({sum(map(len, chosen[suite].values()))} tasks x "
                     f"{len(CACHE_SYSTEMS)} systems)")
            speculated: dict[str, int] = {}
            records = _run_suite(suite, orchs, react, stores, chosen[suite], llm_kind, progress, speculated)
            cache = PlanCacheStore(stores["plan_cache"])
            templates = len(cache.list())
            cache.close()
            out.append(CacheBench(suite, latency_desc, llm_kind, quick, time_scale, records, templates,
                                  lookup_times_ms(stores["plan_cache"], chosen[suite]["heldout"]),
                                  speculated=speculated))
    finally:
        for orch in orchs.values():
            orch.shutdown()
        if owns_ray:
            ray.shutdown()
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.memory.plan_cache", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", choices=PLAN_CACHE_SUITES, action="append", help="default: both")
    p.add_argument("--quick", action="store_true",
                   help=f"{QUICK_PER_KIND} task per kind and half, latencies x{QUICK_SCALE} (about 2 min)")
    p.add_argument("--per-kind", type=int, help="tasks per kind and half (default: all)")
    p.add_argument("--time-scale", type=float, help="multiply every latency (LLM and tools) by this")
    p.add_argument("--seed", type=int, default=0, help="the tools' latency seed")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--rerender", action="store_true",
                   help="rewrite plan-cache.md and .png from the plan-cache.json in --out; measures nothing")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rerender:
        doc = write_plan_cache_report(from_jsonable(json.loads((args.out / f"{STEM}.json").read_text())), args.out)
        print("\n".join(headline(doc)))
        return 0
    scale = args.time_scale if args.time_scale is not None else (QUICK_SCALE if args.quick else 1.0)
    per_kind = args.per_kind if args.per_kind is not None else (QUICK_PER_KIND if args.quick else None)
    t0 = time.monotonic()
    benches = run_plan_cache(tuple(args.suite or PLAN_CACHE_SUITES), per_kind=per_kind, time_scale=scale,
                             seed=args.seed, quick=args.quick, progress=lambda s: print(s, flush=True))
    doc = write_plan_cache_report(benches, args.out)
    print("\n".join(headline(doc)))
    print(f"plan-cache benchmark finished in {time.monotonic() - t0:.0f}s; results in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
