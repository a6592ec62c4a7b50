"""The plan-cache benchmark's report: ``plan-cache.json`` (every run, every summary), ``plan-cache.md`` (the
side-by-side tables and the issue's targets, each marked met or MISSED from the measured numbers) and
``plan-cache.png``. Pure rendering over what ``benchmarks.memory.plan_cache`` measured; nothing is typed in."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchmarks.memory.speculation_report import speculation_lines, speculation_summary
from benchmarks.runner import RunRecord

__all__ = ["ACCURACY_POINTS", "CACHE_SYSTEMS", "PHASES", "STEM", "TOKEN_CUT", "WALL_CUT", "CacheBench", "CacheSystem",
           "from_jsonable", "headline", "summarize", "summary", "target_lines", "write_plan_cache_report"]

CacheSystem = Literal["no_cache", "plan_cache_nospec", "plan_cache", "react_parallel"]
CACHE_SYSTEMS: tuple[CacheSystem, ...] = ("no_cache", "plan_cache_nospec", "plan_cache", "react_parallel")
"""tetrarch without the cache; with it, speculated reads off (``ToolPolicy(speculate_reads=False)``); with it as
shipped (speculated reads on); and native ReAct with parallel calls, the baseline users run."""
PHASES = ("warmup", "heldout")


@dataclass
class CacheBench:
    """One suite's measured runs (``records``: every task under both systems) and what the cache held."""

    suite: str
    latency_model: str
    llm: str
    quick: bool
    time_scale: float
    records: list[RunRecord]
    templates: int = 0
    """Templates in the cache after the run."""
    lookup_ms: list[float] = field(default_factory=list)
    """``PlanCacheStore.lookup`` of each held-out task against the final cache, in ms (the cache's own overhead)."""
    generated_at: str | None = None
    speculated: dict[str, int] = field(default_factory=dict)
    """``"system/task_id"`` → the run's steps whose result came from a call started at submit (its
    ``step_finished`` events marked ``speculative``); absent: none."""


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def summarize(records: Sequence[RunRecord], phase: str, system: str,
              speculated: dict[str, int] | None = None) -> dict[str, Any] | None:
    """One half under one system: counts, hit rate, medians and totals, accuracy on the computed outputs."""
    rs = [r for r in records if r.phase == phase and r.system == system]
    if not rs:
        return None
    hits = [r for r in rs if r.plan_cache == "filled"]
    judged = [r.correct for r in rs if r.correct is not None]
    return {
        "tasks": len(rs), "completed": sum(r.status == "accepted" for r in rs),
        "hits": len(hits), "hit_rate": round(len(hits) / len(rs), 4),
        "adapted": sum(r.plan_cache == "adapt" for r in rs),
        "false_hits": sum(r.correct is False for r in hits),
        "median_wall_s": _median([r.wall_s for r in rs]),
        "mean_wall_s": round(statistics.fmean(r.wall_s for r in rs), 4),
        "median_first_dispatch_s": _median([r.first_dispatch_s for r in rs if r.first_dispatch_s is not None]),
        "median_llm_calls": _median([r.llm_calls for r in rs]),
        "total_llm_calls": sum(r.llm_calls for r in rs),
        "median_input_tokens": _median([r.input_tokens for r in rs]),
        "median_output_tokens": _median([r.output_tokens for r in rs]),
        "median_tokens": _median([r.input_tokens + r.output_tokens for r in rs]),
        "total_input_tokens": sum(r.input_tokens for r in rs),
        "total_output_tokens": sum(r.output_tokens for r in rs),
        "total_tokens": sum(r.input_tokens + r.output_tokens for r in rs),
        "accuracy": round(sum(judged) / len(judged), 4) if judged else None,
        "median_plan_emitted_s": _median([r.plan_emitted_s for r in rs if r.plan_emitted_s is not None]),
        "median_tokens_by_role": {role: _median([r.role_tokens(role) for r in rs])
                                  for role in ("router", "planner", "executor", "reflector")},
        "median_planner_share": _median([r.role_tokens("planner") / (r.input_tokens + r.output_tokens)
                                         for r in rs if r.input_tokens + r.output_tokens]),
        "speculated_steps": sum((speculated or {}).get(f"{r.system}/{r.task_id}", 0) for r in rs),
        "steps": sum(r.steps for r in rs),
    }


def summary(bench: CacheBench) -> dict[str, Any]:
    return {"suite": bench.suite, "templates": bench.templates,
            "median_lookup_ms": _median(bench.lookup_ms), "max_lookup_ms": round(max(bench.lookup_ms), 3)
            if bench.lookup_ms else None,
            "phases": {phase: {s: summarize(bench.records, phase, s, bench.speculated) for s in CACHE_SYSTEMS}
                       for phase in PHASES},
            "speculation": speculation_summary(bench.records, bench.speculated)}


TOKEN_CUT = 0.40
"""Held-out half, with the cache: at least this much fewer tokens (input + output, summed over the half)."""
WALL_CUT = 0.25
"""Held-out half, with the cache: at least this much lower median wall time."""
ACCURACY_POINTS = 0.02
"""Held-out half: the cache's accuracy at most this far below the run without it."""
NEGLIGIBLE_TOKENS = 0.01
NEGLIGIBLE_WALL = 0.05
"""Where reuse should not happen: the cache's cost counts as negligible within these fractions (tokens, median
wall time; wall time is noisy on a shared machine, tokens are exact)."""
STEM = "plan-cache"
_LABEL = {"no_cache": "without cache", "plan_cache_nospec": "plan cache, no speculation",
          "plan_cache": "plan cache + speculated reads", "react_parallel": "native ReAct∥ (parallel calls)"}


def _cut(with_cache: float | None, without: float | None) -> float | None:
    return None if not with_cache or not without else 1 - with_cache / without


def _pct(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None else f"{x:.{digits}%}"


def target_lines(suite_summary: dict[str, Any]) -> list[str]:
    """The issue's targets for this suite's held-out half, from its measured summary."""
    held = suite_summary["phases"]["heldout"]
    base, cache = held["no_cache"], held["plan_cache"]
    if not base or not cache:
        return []
    tokens = _cut(cache["total_tokens"], base["total_tokens"])
    wall = _cut(cache["median_wall_s"], base["median_wall_s"])
    acc_gap = None if cache["accuracy"] is None or base["accuracy"] is None else cache["accuracy"] - base["accuracy"]
    lines = [f"- false hits (a filled plan whose computed answer is wrong): {cache['false_hits']} of "
             f"{cache['hits']} hits — {'met' if cache['false_hits'] == 0 else '**MISSED**'}"]
    if suite_summary["suite"] == "plan-cache":
        lines.append(f"- fewer tokens (input + output, whole held-out half): {_pct(tokens, 1)} (target ≥ "
                     f"{TOKEN_CUT:.0%}) — " + _verdict(tokens is not None and tokens >= TOKEN_CUT, tokens, TOKEN_CUT))
        if tokens is not None and tokens < TOKEN_CUT and base.get("median_planner_share") is not None:
            lines.append(f"  - why: without the cache the planner's call was {base['median_planner_share']:.0%} of "
                         "a task's tokens (median); a filled plan saves that call and nothing else — the router's "
                         "and the reviewer's calls are the same with and without the cache.")
        lines.append(f"- lower median wall time: {_pct(wall, 1)} (target ≥ {WALL_CUT:.0%}) — "
                     + _verdict(wall is not None and wall >= WALL_CUT, wall, WALL_CUT))
        if wall is not None and wall < WALL_CUT:
            lines.append(_wall_why(base, cache))
    else:
        extra_tokens = None if tokens is None else 0.0 - tokens  # the cache's cost: positive = more with it
        extra_wall = None if wall is None else 0.0 - wall
        lines += [
            f"- hit rate where no held-out shape was seen in the warm-up: {_pct(cache['hit_rate'])} (expected 0%) — "
            + ("met" if cache["hits"] == 0 else "**MISSED**"),
            f"- overhead, tokens: {_pct(extra_tokens)} (negligible: within "
            f"±{NEGLIGIBLE_TOKENS:.0%}) — " + ("met" if tokens is not None and abs(tokens) <= NEGLIGIBLE_TOKENS
                                                else "**MISSED**"),
            f"- overhead, median wall time: {_pct(extra_wall)} (negligible: within "
            f"±{NEGLIGIBLE_WALL:.0%}; the lookup itself: median {suite_summary['median_lookup_ms']} ms) — "
            + ("met" if wall is not None and abs(wall) <= NEGLIGIBLE_WALL else "**MISSED**"),
        ]
    if suite_summary["suite"] == "plan-cache":
        lines += speculation_lines(suite_summary.get("speculation"))
    if acc_gap is not None:
        lines.append(f"- accuracy: {cache['accuracy']:.0%} with the cache, {base['accuracy']:.0%} without "
                     f"(target: at most {ACCURACY_POINTS * 100:g} points lower) — "
                     + ("met" if acc_gap >= -ACCURACY_POINTS else "**MISSED**"))
    return lines


def _wall_why(base: dict[str, Any], cache: dict[str, Any]) -> str:
    a, b = base.get("median_plan_emitted_s"), cache.get("median_plan_emitted_s")
    if a is None or b is None:
        return "  - why: not measured (the runs carry no plan emission times)"
    return (f"  - why: the whole plan was emitted {a:.2f} s after submit without the cache and {b:.2f} s with it "
            "(medians; with it, right after the router's answer). The planner already runs beside the router "
            "(speculative planning) and each step is dispatched as soon as it streams, so planning was mostly off "
            f"the critical path: the cache removes only the stream's tail from a {base['median_wall_s']:.2f} s task "
            "whose router call, tool calls and reviewer call all remain.")


def _verdict(met: bool, value: float | None, goal: float) -> str:
    if met:
        return "met"
    short = "" if value is None else f" by {(goal - value) * 100:.1f} percentage points"
    return f"**MISSED**{short}"


def _table(suite_summary: dict[str, Any]) -> list[str]:
    rows = ["| half | system | tasks | completed | hits (filled) | adapted | false hits | median wall s | "
            "median LLM calls | median input tok | median output tok | total tokens | accuracy |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for phase in PHASES:
        for system in CACHE_SYSTEMS:
            x = suite_summary["phases"][phase][system]
            if not x:
                continue
            acc = "n/a" if x["accuracy"] is None else f"{x['accuracy']:.0%}"
            rows.append(f"| {phase} | {_LABEL[system]} | {x['tasks']} | {x['completed']} | {x['hits']} "
                        f"({x['hit_rate']:.0%}) | {x['adapted']} | {x['false_hits']} | {x['median_wall_s']:.2f} | "
                        f"{x['median_llm_calls']:g} | {x['median_input_tokens']:g} | {x['median_output_tokens']:g} | "
                        f"{x['total_tokens']} | {acc} |")
    return rows


def _roles(suite_summary: dict[str, Any]) -> list[str]:
    rows = ["| half | system | median plan emitted s | router tok | planner tok | reflector tok | planner share |",
            "|---|---|---|---|---|---|---|"]
    for phase in PHASES:
        for system in CACHE_SYSTEMS:
            x = suite_summary["phases"][phase][system]
            if not x or "median_tokens_by_role" not in x or system == "react_parallel":  # no tetrarch roles
                continue
            r = x["median_tokens_by_role"]
            emitted = "-" if x["median_plan_emitted_s"] is None else f"{x['median_plan_emitted_s']:.2f}"
            rows.append(f"| {phase} | {_LABEL[system]} | {emitted} | {r['router']:g} | {r['planner']:g} | "
                        f"{r['reflector']:g} | {_pct(x['median_planner_share'])} |")
    return rows


def headline(doc: dict[str, Any]) -> list[str]:
    """The held-out comparison, one line a suite (what the CLI prints at the end)."""
    lines = []
    for s in doc["suites"]:
        held = s["summary"]["phases"]["heldout"]
        base, cache = held["no_cache"], held["plan_cache"]
        if not base or not cache:
            continue
        fewer = _pct(_cut(cache["total_tokens"], base["total_tokens"]), 1)
        lines.append(f"{s['suite']} held-out: hit rate {cache['hit_rate']:.0%}, tokens "
                     f"{cache['total_tokens']} vs {base['total_tokens']} ({fewer} fewer), "
                     f"median wall {cache['median_wall_s']:.2f}s vs {base['median_wall_s']:.2f}s "
                     f"({_pct(_cut(cache['median_wall_s'], base['median_wall_s']))} lower), accuracy "
                     f"{_pct(cache['accuracy'])} vs {_pct(base['accuracy'])}")
        spec = s["summary"].get("speculation") or {}
        if spec.get("ratio_vs_react_parallel") is not None:
            lines.append(f"{s['suite']} held-out hits: {spec['ratio_vs_react_parallel']:.2f}x vs native ReAct∥ with "
                         f"speculated reads, {spec['ratio_nospec_vs_react_parallel']:.2f}x without")
    return lines


def to_jsonable(benches: list[CacheBench]) -> dict[str, Any]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"benchmark": STEM, "latency_model": benches[0].latency_model if benches else None,
            "llm": benches[0].llm if benches else None, "quick": any(b.quick for b in benches),
            "time_scale": benches[0].time_scale if benches else None,
            "generated_at": next((b.generated_at for b in benches if b.generated_at), stamp),
            "suites": [{"suite": b.suite, "summary": summary(b), "templates": b.templates,
                        "lookup_ms": [round(x, 4) for x in b.lookup_ms], "speculated": b.speculated,
                        "runs": [asdict(r) for r in b.records]}
                       for b in benches]}


def from_jsonable(doc: dict[str, Any]) -> list[CacheBench]:
    """The runs a results JSON was written from (to re-render the report without measuring again)."""
    out = []
    for s in doc["suites"]:
        speculated = dict(s.get("speculated") or {})
        records = []
        for run in s["runs"]:
            run = dict(run)
            served = run.pop("speculated", 0)  # a first run kept it in the record
            if served:
                speculated[f"{run['system']}/{run['task_id']}"] = served
            records.append(RunRecord(**run))
        out.append(CacheBench(s["suite"], doc["latency_model"], doc["llm"], doc["quick"], doc["time_scale"], records,
                              s["templates"], s["lookup_ms"], doc["generated_at"], speculated))
    return out


def _plot(doc: dict[str, Any], out: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [("tokens per task (input + output)", lambda r: r["input_tokens"] + r["output_tokens"]),
               ("wall time per task (s)", lambda r: r["wall_s"]), ("LLM calls per task", lambda r: r["llm_calls"])]
    fig, axes = plt.subplots(1, len(metrics), figsize=(20, 4.5))
    for ax, (title, value) in zip(axes, metrics):
        data, labels = [], []
        for s in doc["suites"]:
            for system in CACHE_SYSTEMS:
                data.append([value(r) for r in s["runs"] if r["phase"] == "heldout" and r["system"] == system])
                labels.append(f"{s['suite'].removeprefix('plan-cache').strip('-') or 'same kinds'}\n{_LABEL[system]}")
        ax.boxplot(data, tick_labels=labels)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"plan cache, held-out halves — {doc['latency_model']}", fontsize=10)
    fig.tight_layout()
    path = out / f"{STEM}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def write_plan_cache_report(benches: list[CacheBench], out: Path) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    doc = to_jsonable(benches)
    (out / f"{STEM}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    plot = _plot(doc, out)
    quick = " --quick" if doc["quick"] else ""
    md = [f"# Benchmark: the plan cache (`RuntimeConfig(plan_cache=True)`)", "",
          f"Generated {doc['generated_at']} by `python -m benchmarks.memory.plan_cache{quick}` (also "
          f"`tetrarch bench --plan-cache{quick}`) — LLM: {doc['llm']}; latency model: {doc['latency_model']}; "
          f"tool latency scale: {doc['time_scale']:g}.",
          "Three Orchestrators on one local Ray — without the plan cache, with it and its speculated reads off "
          "(`ToolPolicy(speculate_reads=False)`), with it as shipped (speculated reads on) — and native ReAct with "
          "parallel calls, same tools and LLM; every task ran on all four, interleaved task by task (order "
          "rotated). The targets below compare the cache as shipped with no cache. The warm-up half ran first "
          "(the cache "
          "learns from its accepted tasks, and already reuses within it), then the held-out half: other tasks "
          "(other entities, other numbers) of the same kinds — no task appears twice. The cache starts empty for "
          "each suite. Accuracy is judged on what the plan computed (the final steps' outputs against the gold "
          "number computed from the world), not on the simulated model's answer text, which is the gold text "
          "whatever the steps returned: a plan filled with a wrong value is counted wrong.", ""]
    for s in doc["suites"]:
        summ = s["summary"]
        md += [f"## Suite `{s['suite']}`", "", *_table(summ), "",
               "Where the time and tokens go (medians per task; plan emitted: submit → the final plan's last step):",
               "", *_roles(summ), "",
               f"Templates in the cache at the end: {summ['templates']}; a lookup (fresh connection) took median "
               f"{summ['median_lookup_ms']} ms, at most {summ['max_lookup_ms']} ms.", "",
               "Targets (held-out half):", *target_lines(summ), ""]
    md += [f"![{plot}]({plot})", ""]
    (out / f"{STEM}.md").write_text("\n".join(md) + "\n")
    return doc
