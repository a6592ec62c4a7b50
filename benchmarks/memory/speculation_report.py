"""The speculated reads' part of the plan-cache report: on the held-out tasks the cache filled, tetrarch with
speculated reads against the same without them and against native ReAct with parallel calls, from the same run.
Pure over the records ``benchmarks.memory.plan_cache`` measured."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from benchmarks.runner import RunRecord

__all__ = ["REACT_PARALLEL_RATIO", "speculation_lines", "speculation_summary"]

REACT_PARALLEL_RATIO = 3.0
"""Issue 63's target: plan-cache hits at least this many times faster than native ReAct∥ (median wall time)."""


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def _ratio(slow: float | None, fast: float | None) -> float | None:
    return None if not slow or not fast else round(slow / fast, 3)


def speculation_summary(records: Sequence[RunRecord], speculated: dict[str, int]) -> dict[str, Any] | None:
    """Held-out tasks that both cached systems served with a filled plan: each system's median wall time over
    exactly those tasks, the ratios, and how many steps a speculated call served."""
    held = [r for r in records if r.phase == "heldout"]
    by = {(r.system, r.task_id): r for r in held}
    hits = sorted(r.task_id for r in held if r.system == "plan_cache" and r.plan_cache == "filled"
                  and getattr(by.get(("plan_cache_nospec", r.task_id)), "plan_cache", None) == "filled")
    if not hits or not any(("react_parallel", t) in by for t in hits):
        return None
    walls = {s: _median([by[(s, t)].wall_s for t in hits if (s, t) in by])
             for s in ("no_cache", "plan_cache_nospec", "plan_cache", "react_parallel")}
    spec = [by[("plan_cache", t)] for t in hits]
    return {
        "hit_tasks": len(hits), "median_wall_s": walls,
        "ratio_vs_react_parallel": _ratio(walls["react_parallel"], walls["plan_cache"]),
        "ratio_nospec_vs_react_parallel": _ratio(walls["react_parallel"], walls["plan_cache_nospec"]),
        "speculation_cut": None if not walls["plan_cache_nospec"] or not walls["plan_cache"]
        else round(1 - walls["plan_cache"] / walls["plan_cache_nospec"], 4),
        "served_steps": sum(speculated.get(f"plan_cache/{r.task_id}", 0) for r in spec),
        "steps": sum(r.steps for r in spec),
        "median_first_dispatch_s": {s: _median([by[(s, t)].first_dispatch_s for t in hits if (s, t) in by
                                                and by[(s, t)].first_dispatch_s is not None])
                                    for s in ("plan_cache_nospec", "plan_cache")},
        "median_llm_calls": {s: _median([by[(s, t)].llm_calls for t in hits if (s, t) in by])
                             for s in ("plan_cache", "react_parallel")},
        "same_accuracy": [by[("plan_cache", t)].correct for t in hits]
        == [by[("plan_cache_nospec", t)].correct for t in hits],
        "median_phases_s": _phases(spec),
    }


def _phases(runs: Sequence[RunRecord]) -> dict[str, float | None]:
    """Where a hit's time goes, medians: submit → the route (the first step dispatched after it), the route → the
    last step's end (the steps still running after the route), and that end → the result (the reviewer)."""
    route, after, review = [], [], []
    outran = chained = 0
    for r in runs:
        ends = [x["end"] for x in r.timeline]
        if r.first_dispatch_s is None or not ends:
            continue
        routed = r.first_dispatch_s
        route.append(routed)
        after.append(max(0.0, max(ends) - routed))
        review.append(r.wall_s - max(ends))
        early = [x for x in r.timeline if x["start"] < routed]
        outran += any(x["end"] > routed for x in early)
        chained += any(x["start"] >= routed and x["end"] - x["start"] > _LONG_STEP_S for x in r.timeline)
    return {"route": _median(route), "steps_after_route": _median(after), "review": _median(review),
            "tasks_reads_outran_route": outran, "tasks_long_step_after_route": chained, "tasks": len(route)}


_LONG_STEP_S = 0.05
"""A step after the route longer than this is a tool call, not the arithmetic on the reads."""


def speculation_lines(spec: dict[str, Any] | None) -> list[str]:
    """The target lines (held-out cache hits): the ratio against native ReAct∥, and what speculation changed."""
    if spec is None:
        return []
    walls, ratio = spec["median_wall_s"], spec["ratio_vs_react_parallel"]
    met = ratio is not None and ratio >= REACT_PARALLEL_RATIO
    lines = [
        f"- plan-cache hits vs native ReAct∥ (the {spec['hit_tasks']} held-out tasks both cached systems filled; "
        f"medians over those tasks): {walls['plan_cache']:.2f} s with speculated reads, "
        f"{walls['plan_cache_nospec']:.2f} s without, {walls['react_parallel']:.2f} s native ReAct∥ → "
        f"**{ratio:.2f}×** ({spec['ratio_nospec_vs_react_parallel']:.2f}× without speculation; target ≥ "
        f"{REACT_PARALLEL_RATIO:g}×) — " + ("met" if met else f"**MISSED** by {REACT_PARALLEL_RATIO - ratio:.2f}×"),
        f"- speculated reads, on vs off: median wall {_pct(spec['speculation_cut'])} lower; "
        f"{spec['served_steps']} of {spec['steps']} steps served by a call started at submit; the verdicts on the "
        f"computed outputs are {'the same' if spec['same_accuracy'] else '**DIFFERENT**'} task by task",
    ]
    phases = spec.get("median_phases_s") or {}
    if not met and None not in (phases.get("route"), phases.get("steps_after_route"), phases.get("review")):
        calls = spec["median_llm_calls"]
        need = walls["react_parallel"] / REACT_PARALLEL_RATIO
        calls_only = phases["route"] + phases["review"]
        lines.append(
            f"  - why: with speculated reads a hit's {walls['plan_cache']:.2f} s is (medians) {phases['route']:.2f} s "
            f"to the route (the router's call; the reads run beside it), {phases['steps_after_route']:.2f} s of "
            f"steps still running after it and {phases['review']:.2f} s for the reviewer's call "
            f"({calls['plan_cache']:g} model calls in series; ReAct∥ {calls['react_parallel']:g}). The steps after "
            f"the route: in {phases['tasks_reads_outran_route']} of {phases['tasks']} hits a read started at submit "
            f"was still running when the router answered (the tool is slower than the call; ReAct∥ waits for it "
            f"too), and in {phases['tasks_long_step_after_route']} a read took an earlier read's result (not "
            f"speculated: it starts after the route). {REACT_PARALLEL_RATIO:g}× needs {need:.2f} s; the router's and "
            f"the reviewer's calls alone take {calls_only:.2f} s, leaving {max(0.0, need - calls_only):.2f} s for "
            "all the tool time after the route. Speculating reads fed by speculated reads would start those a few "
            "tenths of a second earlier, not remove them: the rest is the reviewer's call (issue 63's shorter last "
            "call) and the router's (off the critical path).")
    return lines


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"
