"""``tetrarch bench --suite generality`` (also ``python -m benchmarks.generality``): the scripted measurement
by default (``generality.json``/``.md``); ``--llm local`` runs the embedded model end to end instead (``e2e``) and
folds the run into the one end-to-end report (``generality-e2e.json``/``.md``: latest run, dated history);
``--typed`` runs every task with ``output_type`` of its answer's shape, scripted, in both reply forms
(``generality-typed.json``/``.md``)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.generality.scripted import CONFIGS
from benchmarks.generality.suite import SPLITS, select, suite_tools

__all__ = ["main", "parser"]

RESULTS = Path(__file__).resolve().parent.parent / "results"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tetrarch bench --suite generality")
    p.add_argument("--config", choices=CONFIGS, action="append", dest="configs",
                   help="configuration(s) to measure (default: both; one missing from this build is skipped)")
    p.add_argument("--split", choices=SPLITS, default="all", help="the half to run (default: both, reported apart)")
    p.add_argument("--limit", type=int, help="an even spread of at most this many tasks")
    p.add_argument("--label", default="current code",
                   help="what is measured: the report's title; with --llm local, the run's history row (a run is "
                        "keyed by the minute it started and this label)")
    p.add_argument("--stem", help="file name of the report (STEM.json, STEM.md; default: generality, or "
                                  "generality-e2e with --llm local)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--llm", default="scripted", choices=("scripted", "local"),
                   help="scripted (every role scripted: measures code) or local (the embedded model end to end, "
                        "held-out half, beside the ReAct baselines)")
    p.add_argument("--systems", default="tetrarch,react",
                   help="with --llm local: comma-separated systems (tetrarch, react, react_parallel)")
    p.add_argument("--typed", action="store_true",
                   help="every task with output_type of its expected answer's shape (scripted; both reply forms): "
                        "does result.output validate and equal the expected value? (generality-typed.json/.md)")
    p.add_argument("--note", default="", help="with --llm local: how the run was made and what changed, for its "
                                              "history row")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    t0 = time.monotonic()
    if args.typed:
        if args.llm != "scripted":
            raise SystemExit("--typed runs with scripted roles: drop --llm local (the corpus has the typed run on the "
                             "embedded model: tetrarch bench --suite corpus --typed --llm local)")
        return _typed(args, t0)
    if args.llm == "local":
        from benchmarks.generality.e2e import run_local
        from benchmarks.generality.e2e_report import REPORT

        split = "heldout" if args.split == "all" else args.split
        run_local(select(split, args.limit), args.out, split=split,
                  systems=tuple(s.strip() for s in args.systems.split(",") if s.strip()),
                  stem=args.stem or REPORT, note=args.note, label=args.label)
        print(f"generality (--llm local) finished in {time.monotonic() - t0:.0f}s")
        return 0
    from benchmarks.generality.measure import measure
    from benchmarks.generality.report import build_doc, write_report

    tasks = select(args.split, args.limit)
    configs = tuple(args.configs or CONFIGS)
    rights, wrongs, available = measure(tasks, configs, suite_tools(), progress=lambda s: print(s, flush=True))
    doc = build_doc(tasks, rights, wrongs, configs, available, args.label)
    js, md = write_report(doc, args.out, args.stem or "generality")
    for name, cfg in doc["configs"].items():
        for half, s in cfg.items():
            r, w = s["right"], s["wrong"]["all"]
            print(f"{name:8} {half:8} right: {r['accepted']}/{r['tasks']} accepted, {r['false_vetoes']} false vetoes, "
                  f"{r['rewrites']} rewrites, {r['second_reviews']} second reviews; wrong caught {w['caught']}/"
                  f"{w['variants']}")
    print(f"wrote {js} and {md} in {time.monotonic() - t0:.0f}s")
    return 0


def _typed(args: argparse.Namespace, t0: float) -> int:
    from benchmarks.generality.typed_measure import PROFILES, measure_typed
    from benchmarks.generality.typed_report import STEM, build_typed_doc, write_typed

    tasks = select(args.split, args.limit)
    configs = tuple(args.configs or CONFIGS)
    records, available = measure_typed(tasks, configs, tuple(PROFILES), suite_tools(),
                                       progress=lambda s: print(s, flush=True))
    doc = build_typed_doc(tasks, records, configs, available, args.label)
    js, md = write_typed(doc, args.out, args.stem or STEM)
    for name, profiles in doc["configs"].items():
        for profile, halves in profiles.items():
            for half, s in halves.items():
                print(f"{name:8} {profile:12} {half:8} typed output equal to the expected value: {s['equal']}/"
                      f"{s['tasks']} (text accepted {s['text_accepted']}, lost against text {s['lost_against_text']})")
    print(f"wrote {js} and {md} in {time.monotonic() - t0:.0f}s")
    return 0
