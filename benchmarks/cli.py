"""`tetrarch bench`: plan-then-execute vs ReAct vs ReAct+parallel calls, side by side, written to results/."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

from agents.llm.simulated import DEFAULT_LATENCY, LatencyModel
from benchmarks.history import DEFAULT_LABEL
from benchmarks.suite import REAL_MODEL_SUITES, SPLITS, SUITES, SYSTEMS

__all__ = ["main"]

RESULTS = Path(__file__).parent / "results"
GENERALITY = "generality"
"""The checks' generality suite (``benchmarks/generality``): its own runner and report, run on its own."""
QUICK_TASKS = 5
QUICK_SCALE = 0.25


def llm_choice(value: str) -> str:
    """``--llm``: ``sim``, ``local`` (the embedded llama.cpp model) or ``openai:MODEL``; anything else is an
    error (it used to be taken silently as the simulated model)."""
    if value in ("sim", "local") or (value.startswith("openai:") and len(value) > len("openai:")):
        return value
    raise argparse.ArgumentTypeError(f"unknown --llm {value!r}: use sim, local, or openai:MODEL (with --base-url)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tetrarch bench")
    p.add_argument("--suite", choices=SUITES + REAL_MODEL_SUITES + (GENERALITY,), action="append",
                   help="suite(s) to run (default with --all: the simulated-world ones); corpus: the shipped corpus "
                        "and built-in tools, for accuracy on a real model; generality: the checks' generality suite "
                        "(docs/generality.md; every role scripted, or --llm local end to end)")
    p.add_argument("--split", choices=SPLITS, default="all",
                   help="a split suite's half: dev (for prompt work) or heldout (report once per change)")
    p.add_argument("--system", choices=SYSTEMS, action="append", dest="systems",
                   help="run only this system (repeatable; default: all three side by side). Ratios need two; a "
                        "report of one system is for diagnosis, not comparison")
    p.add_argument("--all", action="store_true", help="every suite, then the system microbenchmarks")
    p.add_argument("--quick", action="store_true",
                   help=f"{QUICK_TASKS} tasks per suite, latencies x{QUICK_SCALE} (ratios are kept; < 3 min)")
    p.add_argument("--llm", default="sim", type=llm_choice,
                   help="sim (default), local (the embedded model, installed with `tetrarch model pull`), "
                        "or openai:MODEL with --base-url")
    p.add_argument("--base-url")
    p.add_argument("--out", type=Path, help="where results go (default: benchmarks/results/, or its local/ with "
                                            "--llm local; the generality suite's always benchmarks/results/)")
    p.add_argument("--limit", type=int, help="tasks per suite")
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-scale", type=float, help="multiply every latency (LLM and tools) by this")
    p.add_argument("--tool-scale", type=float, default=1.0,
                   help="multiply the tools' latencies only (sensitivity: how the ratios move with tool speed)")
    p.add_argument("--ttft", type=float, default=DEFAULT_LATENCY.ttft_s, help="simulated time to first token, s")
    p.add_argument("--decode-tps", type=float, default=DEFAULT_LATENCY.decode_tokens_per_s)
    p.add_argument("--prefill-tps", type=float, default=DEFAULT_LATENCY.prefill_tokens_per_s)
    p.add_argument("--no-system", action="store_true", help="skip the system microbenchmarks with --all")
    p.add_argument("--plan-cache", action="store_true",
                   help="the plan-cache benchmark instead (python -m benchmarks.memory.plan_cache: with and without "
                        "RuntimeConfig(plan_cache=True), warm-up then held-out tasks; honours --quick and --out)")
    p.add_argument("--no-plan-cache", action="store_true", help="skip the plan-cache benchmark with --all")
    p.add_argument("--label", help="what is measured: a real-model run's row in its report's history (--suite corpus: "
                                   "benchmarks/results/local/corpus-<split>.md; --suite generality --llm local: "
                                   "benchmarks/results/generality-e2e.md); default: current code")
    p.add_argument("--note", help="how the run was made and what it showed, for its history row (the table shows its "
                                  "first sentence)")
    p.add_argument("--typed", action="store_true",
                   help="typed outputs: --suite corpus runs tetrarch alone with each task's output_type of its "
                        "answer's kind and grades result.output (its history row says so); --suite generality "
                        "measures them with scripted roles (generality-typed.md)")
    p.add_argument("--rerender", action="store_true",
                   help="rewrite the reports (md, plots) from the JSON already in --out; measures nothing")
    return p


def results_dir(args: argparse.Namespace) -> Path:
    """``--out``, else where results of that model live: the embedded model's beside each other in ``local/``
    (the generality suite keeps its own reports in benchmarks/results/)."""
    if args.out is not None:
        return args.out
    local = args.llm == "local" and not (args.suite and GENERALITY in args.suite)
    return RESULTS / "local" if local else RESULTS


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.out = results_dir(args)
    if args.plan_cache:
        return _plan_cache(args)
    if args.suite and GENERALITY in args.suite:
        return _generality(args)
    suites = args.suite or (list(SUITES) if args.all else ["parallel"])
    if args.label is not None or args.note is not None:
        _history_only(suites, args.llm)
    if args.rerender:
        return _rerender(suites, args)
    if args.typed and tuple(args.systems or SYSTEMS) != ("tetrarch",):
        raise SystemExit("--typed runs tetrarch alone (the ReAct baselines have no output type): add --system "
                         "tetrarch")
    scale = args.time_scale if args.time_scale is not None else (QUICK_SCALE if args.quick else 1.0)
    limit = args.limit if args.limit is not None else (QUICK_TASKS if args.quick else None)
    llm = None
    server = None
    if args.llm == "local":
        from agents.llm.local import start_local_llm

        llm, server = start_local_llm()
        scale = 1.0 if args.time_scale is None else args.time_scale
    elif args.llm != "sim":
        from agents.llm.factory import build_llm

        llm = build_llm(args.llm, args.base_url, start_local=True)
        scale = 1.0 if args.time_scale is None else args.time_scale
    try:
        return _run(args, suites, llm, scale, limit)
    finally:
        if server is not None:
            server.stop()


def _run(args: argparse.Namespace, suites: list[str], llm: object, scale: float, limit: int | None) -> int:
    from benchmarks.report import ratio_lines, write_report
    from benchmarks.runner import run_suite

    latency = LatencyModel(args.ttft, args.decode_tps, args.prefill_tps)
    t0 = time.monotonic()
    for suite in suites:
        print(f"== suite {suite}", flush=True)
        run = run_suite(suite, llm=llm, latency=latency, quick=args.quick, limit=limit, reps=args.reps,
                        embedded=args.llm == "local", split=args.split, systems=tuple(args.systems or SYSTEMS),
                        seed=args.seed, time_scale=scale, tool_scale=args.tool_scale, typed=args.typed,
                        progress=lambda s: print(s, flush=True))
        summary = write_report(run, args.out, label=args.label or DEFAULT_LABEL, note=args.note or "")
        print(json.dumps(summary["systems"], indent=1))
        print("\n".join(ratio_lines(summary)))
    if args.all and not args.no_plan_cache and args.llm == "sim":
        _plan_cache(args)
    if args.all and not args.no_system:
        from benchmarks.system.run import main as system_main

        quick = ["--quick"] if args.quick else []
        system_main(["--out", str(args.out)] + quick)
        for only in ("throughput", "default", "cancel"):  # each merges its rows into what the line above wrote
            system_main(["--out", str(args.out), "--only", only] + quick)
    print(f"bench finished in {time.monotonic() - t0:.0f}s; results in {args.out}")
    return 0


def _history_only(suites: list[str], llm: str) -> None:
    """--label and --note name a history row: an error where the report keeps none (it would be dropped)."""
    from benchmarks.history import keeps_history

    plain = [s for s in suites if not keeps_history(s, llm)]
    if plain:
        raise SystemExit(f"--label/--note name a run's history row, which only a real-model run of "
                         f"{', '.join(REAL_MODEL_SUITES + (GENERALITY,))} keeps: drop them for {', '.join(plain)}")


def _rerender(suites: list[str], args: argparse.Namespace) -> int:
    """Each report again from its JSON, measuring nothing: the summaries recomputed from the records (a wording
    or format change), the plots and the markdown; a history report keeps its label, note and rows as they are."""
    from benchmarks.report import plots, render
    from benchmarks.runner import from_jsonable, to_jsonable

    for suite in suites:
        stem = suite if args.split == "all" else f"{suite}-{args.split}"
        doc = json.loads((args.out / f"{stem}.json").read_text())
        run = from_jsonable(doc)
        doc = {**to_jsonable(run), **{k: doc[k] for k in ("label", "note", "history") if k in doc}}
        plots(run, args.out)
        (args.out / f"{stem}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
        (args.out / f"{stem}.md").write_text(render(doc))
        print(f"re-rendered {args.out / stem}.md from {stem}.json")
    return 0


def _plan_cache(args: argparse.Namespace) -> int:
    """The plan-cache benchmark (simulated LLM only: it measures what the cache saves, not a model)."""
    if args.llm != "sim":
        raise SystemExit("--plan-cache runs on the simulated LLM only (--llm sim)")
    from benchmarks.memory.plan_cache import main as plan_cache_main

    return plan_cache_main(["--out", str(args.out), "--seed", str(args.seed)] + (["--quick"] if args.quick else [])
                           + ([] if args.time_scale is None else ["--time-scale", str(args.time_scale)]))


def _generality(args: argparse.Namespace) -> int:
    """The generality suite: scripted roles by default (``--llm sim``: code is what is measured), the embedded
    model end to end with ``--llm local``. More options: ``python -m benchmarks.generality --help``."""
    if args.suite != [GENERALITY]:
        raise SystemExit("--suite generality runs on its own: give it without other suites")
    if args.llm not in ("sim", "local"):
        raise SystemExit("--suite generality runs with scripted roles (--llm sim) or the embedded model (--llm local)")
    if args.split not in ("all", "dev", "heldout"):
        raise SystemExit("--suite generality has the halves dev and heldout (or all)")
    from benchmarks.generality.cli import main as generality_main

    argv = ["--split", args.split, "--out", str(args.out), "--llm", "local" if args.llm == "local" else "scripted"]
    if args.limit is not None or args.quick:
        argv += ["--limit", str(args.limit if args.limit is not None else QUICK_TASKS * 4)]
    if args.systems and args.llm == "local":
        argv += ["--systems", ",".join(args.systems)]
    if args.label:
        argv += ["--label", args.label]
    if args.typed:
        if args.llm != "sim":
            raise SystemExit("--suite generality --typed runs with scripted roles: drop --llm local")
        argv += ["--typed"]
    if args.note:
        if args.llm != "local":
            raise SystemExit("--note is for a run's history row: give it with --suite generality --llm local")
        argv += ["--note", args.note]
    return generality_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
