"""Writes a suite's results: NAME.json (fixed format of DESIGN.md), NAME.md (medians and ratios, rendered from the
JSON alone) and PNG plots; a real-model suite's report also keeps its dated history (``benchmarks.history``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.history import DEFAULT_LABEL, folded, history_lines, keeps_history, latest_lines
from benchmarks.runner import SYSTEMS, SuiteRun, from_jsonable, to_jsonable

__all__ = ["plot_names", "plots", "ratio_lines", "render", "role_lines", "target_lines", "write_report"]

TARGETS: dict[str, tuple[float, float, float]] = {
    "parallel": (3.0, 1.8, 3.0), "mixed": (4.0, 2.5, 6.0), "chain": (1.8, 1.8, 1.8), "repair": (1.6, 1.3, 2.0)}
"""Per suite: wall-time ratio vs ReAct, vs ReAct + parallel calls, and input-token ratio vs ReAct (medians)."""

_LABEL = {"tetrarch": "tetrarch (plan-then-execute)", "react": "ReAct", "react_parallel": "ReAct + parallel calls",
          "react_json": "ReAct, JSON text", "react_parallel_json": "ReAct + parallel calls, JSON text"}
_SHORT = {"tetrarch": "tetrarch", "react": "ReAct", "react_parallel": "ReAct∥", "react_json": "ReAct-J",
          "react_parallel_json": "ReAct∥-J"}
_MODE_TEXT = {"plan": "plan (DAG written as text)", "native": "native function calling",
              "json": "JSON in the reply text"}


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if not a or not b else b / a


def ratio_lines(summary: dict[str, Any]) -> list[str]:
    s = summary["systems"]
    t = s.get("tetrarch")
    lines = []
    for other in SYSTEMS[1:]:
        o = s.get(other)
        if not t or not o:
            continue
        wall = _ratio(t["median_wall_s"], o["median_wall_s"])
        toks = _ratio(t["median_input_tokens"], o["median_input_tokens"])
        calls = _ratio(t["median_llm_calls"], o["median_llm_calls"])
        lines.append(f"- vs {_LABEL[other]} ({o.get('tool_calling', '?')}): **{wall:.2f}× faster** (median wall time), "
                     f"**{toks:.2f}× fewer input tokens**, {calls:.2f}× fewer LLM calls")
    return lines


def answer_lead_line(summary: dict[str, Any]) -> list[str]:
    """How far ahead of the task's end tetrarch's streamed answer starts (empty for results measured before)."""
    t = summary["systems"].get("tetrarch") or {}
    lead, writing = t.get("median_answer_lead_s"), t.get("median_answer_writing_s")
    if lead is None or writing is None:
        return []
    return [f"Streamed answer (`handle.stream_answer()`): the answer's first text was out a median **{lead:.2f} s** "
            f"before the task ended (its pieces reach a caller about a millisecond after they are out); the reviewer "
            f"wrote the answer over a median {writing:.2f} s.", ""]


def target_lines(summary: dict[str, Any]) -> list[str]:
    """The issue's targets that apply to this suite, each marked met or MISSED from the measured medians."""
    s, suite = summary["systems"], summary["suite"]
    t, react, par = s.get("tetrarch"), s.get("react"), s.get("react_parallel")
    if not t:
        return []
    if t["completed"] < t["tasks"]:
        # Medians over failed runs would flatter whichever system failed fastest.
        return [f"- not judged: tetrarch completed {t['completed']} of {t['tasks']} tasks "
                "(see the runs in the JSON for why)"]
    goals = TARGETS.get(suite)
    checks: list[tuple[str, float | None, float, str]] = []
    if goals is not None and react and par:
        mode, par_mode = react.get("tool_calling", "?"), par.get("tool_calling", "?")
        checks.append((f"wall time vs ReAct ({mode})", _ratio(t["median_wall_s"], react["median_wall_s"]),
                       goals[0], "×"))
        checks.append((f"wall time vs ReAct + parallel calls ({par_mode})",
                       _ratio(t["median_wall_s"], par["median_wall_s"]), goals[1], "×"))
        checks.append((f"fewer input tokens than ReAct ({mode})",
                       _ratio(t["median_input_tokens"], react["median_input_tokens"]), goals[2], "×"))
    lines = []
    for label, value, goal, unit in checks:
        verdict = "met" if value is not None and value >= goal else "**MISSED**"
        shown = "n/a" if value is None else f"{value:.2f}{unit}"
        lines.append(f"- {label}: {shown} (target ≥ {goal:g}{unit}) — {verdict}")
    if suite != "repair":
        calls = t["median_llm_calls"]
        lines.append(f"- LLM calls per task without replans: median {calls:g} (target 3) — "
                     f"{'met' if calls <= 3 else '**MISSED**'}")
    return lines


def _table(summary: dict[str, Any]) -> list[str]:
    rows = ["| system | tool calling | tasks | completed | median wall s | median first dispatch s | median LLM calls | "
            "median input tokens | median output tokens | makespan / critical path | span / emission bound | "
            "accuracy |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in SYSTEMS:
        x = summary["systems"].get(name)
        if not x:
            continue
        acc = "n/a (simulated)" if x["accuracy"] is None else f"{x['accuracy']:.0%}"
        mcp = "-" if x["median_makespan_over_critical_path"] is None else f"{x['median_makespan_over_critical_path']:.2f}"
        fd = "-" if x["median_first_dispatch_s"] is None else f"{x['median_first_dispatch_s']:.2f}"
        meb = x.get("median_span_over_emission_bound")
        eb = "-" if meb is None else f"{meb:.2f}"
        rows.append(f"| {_LABEL[name]} | {x.get('tool_calling', '?')} | {x['tasks']} | {x['completed']} | {x['median_wall_s']:.2f} | {fd} | "
                    f"{x['median_llm_calls']:g} | {x['median_input_tokens']:g} | {x['median_output_tokens']:g} | "
                    f"{mcp} | {eb} | {acc} |")
    return rows


_ROLES = ("router", "planner", "executor", "reflector")


def role_lines(summary: dict[str, Any]) -> list[str]:
    """Where tetrarch's tokens go: the median calls and tokens of each role (empty for results measured before
    the runs recorded them)."""
    t = summary["systems"].get("tetrarch") or {}
    roles = t.get("by_role") or {}
    if not roles:
        return []
    rows = ["| tetrarch role | median LLM calls | median input tokens | median output tokens |", "|---|---|---|---|"]
    for role in sorted(roles, key=lambda r: _ROLES.index(r) if r in _ROLES else len(_ROLES)):
        x = roles[role]
        rows.append(f"| {role} | {x['llm_calls']:g} | {x['input_tokens']:g} | {x['output_tokens']:g} |")
    return ["Where tetrarch's tokens go (medians per role over the same runs; they need not add up to the "
            "median total):", "", *rows]


def plot_names(run: SuiteRun) -> list[str]:
    """The plots a run's report shows (``plots`` writes them): the box plots, and a Gantt chart of one task when
    tetrarch answered one."""
    names = [f"{run.suite}.png"]
    if _gantt_task(run) is not None:
        names.append(f"{run.suite}-gantt.png")
    return names


def _gantt_task(run: SuiteRun) -> str | None:
    return next((r.task_id for r in run.records if r.system == "tetrarch" and r.status == "accepted"), None)


def plots(run: SuiteRun, out: Path) -> None:
    """Writes the run's box plots and Gantt chart into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.trace.gantt import plot_gantt_comparison

    metrics = [("wall_s", "wall time per task (s)"), ("llm_calls", "LLM calls per task"),
               ("input_tokens", "input tokens per task"), ("output_tokens", "output tokens per task")]
    fig, axes = plt.subplots(1, 4, figsize=(16, 4))
    ran = [s for s in SYSTEMS if any(r.system == s for r in run.records)]  # `--system` may pick fewer
    for ax, (key, title) in zip(axes, metrics):
        data = [[getattr(r, key) for r in run.records if r.system == s] for s in ran]
        ax.boxplot(data, tick_labels=[_SHORT[s] for s in ran])
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"suite '{run.suite}' — {run.latency_model}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / f"{run.suite}.png", dpi=110)
    plt.close(fig)
    task_id = _gantt_task(run)
    if task_id:
        pair = {s: next(r for r in run.records if r.system == s and r.task_id == task_id)
                for s in SYSTEMS if any(r.system == s and r.task_id == task_id for r in run.records)}
        plot_gantt_comparison({_LABEL[s]: (r.timeline, r.wall_s) for s, r in pair.items()},
                              out / f"{run.suite}-gantt.png",
                              title=f"{task_id}: one task under each system (bars = tool steps)")


def render(doc: dict[str, Any]) -> str:
    """A results JSON's markdown, from the JSON alone (a report that keeps a history adds its heading, note and
    dated history: ``benchmarks.history``)."""
    run = from_jsonable(doc)
    summary = run.summary()
    split = "" if run.split == "all" else f" --split {run.split}"
    md = [f"# Benchmark: suite `{run.suite}`{'' if not split else f' ({run.split} half)'}", "",
          *latest_lines(doc),
          f"Generated {doc['generated_at']} by `tetrarch bench --suite {run.suite}{split}"
          f"{' --quick' if run.quick else ''}{' --typed' if run.answers == 'typed' else ''}`"
          f" — LLM: {run.llm}; latency model: {run.latency_model}; tool latency scale: {run.time_scale:g}.",
          "All systems ran in one process, interleaved task by task, on the same tools and LLM.", "",
          *_table(summary), "",
          "Tool calling: " + "; ".join(f"`{mode}` = {_MODE_TEXT.get(mode, mode)}" for mode in
                                       dict.fromkeys(x.get("tool_calling", "?") for x in summary["systems"].values()))
          + ".", "",
          "Makespan / critical path: first step started → last step finished, over the DAG's critical path of "
          "measured step durations (as if the whole plan were known at once). Span / emission bound: first step "
          "emitted → last finished, over the best possible span given when the streaming plan emitted each step "
          "(`benchmarks/makespan.py`): 1.00 means dispatch added nothing.", "",
          "Ratios (medians):", *ratio_lines(summary), "", *answer_lead_line(summary)]
    roles = role_lines(summary)
    if roles:
        md += [*roles, ""]
    targets = target_lines(summary)
    if targets:
        md += ["Targets:", *targets, ""]
    md += [f"![{p}]({p})" for p in plot_names(run)]
    history = history_lines(doc)
    return "\n".join(md + ([""] + history if history else [])) + ("" if history else "\n")


def write_report(run: SuiteRun, out: Path, *, label: str = DEFAULT_LABEL, note: str = "") -> dict[str, Any]:
    """Writes ``<stem>.json``, ``<stem>.md`` and the plots; a real-model suite's report is folded instead
    (``benchmarks.history``): the run's row is added, and its tables and plots replace the report's only when it
    ran several systems side by side. Returns the run's summary."""
    out.mkdir(parents=True, exist_ok=True)
    doc = to_jsonable(run)
    stem = run.suite if run.split == "all" else f"{run.suite}-{run.split}"
    js = out / f"{stem}.json"
    report = doc
    if keeps_history(run.suite, run.llm):
        report = folded(json.loads(js.read_text()) if js.exists() else None, doc, label, note)
    if report["generated_at"] == doc["generated_at"]:
        plots(run, out)
    js.write_text(json.dumps(report, indent=1, default=str) + "\n")
    (out / f"{stem}.md").write_text(render(report))
    return run.summary()
