"""A self-contained HTML trace page: no scripts, no network at view time (inline CSS and SVG only).

The DAG (steps coloured by status, critical path outlined), a Gantt timeline of every attempt (retries and
replans visible), per-step inputs/outputs (tool output shown as untrusted data), the reflector's scores and
decisions, and tokens and LLM calls per role. Every text passes through ``redact`` and ``html.escape``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

from agents.checks.api import CheckFinding
from agents.events import PlanCut
from agents.trace.gantt import STATUS_COLORS
from agents.trace.model import TaskTrace, redact
from dag.graph import topological_levels

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f5f5f5}.untrusted{background:#fff8e6;border-left:3px solid #e0a030;
padding:6px;white-space:pre-wrap;font:12px monospace;max-height:12em;overflow:auto;margin:0}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-size:12px}
svg text{font:11px system-ui,sans-serif}.muted{color:#777}
"""


def _e(text: Any, secrets: Iterable[str]) -> str:
    s = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    return html.escape(redact(s, secrets))


def _badge(status: str) -> str:
    return f'<span class="badge" style="background:{STATUS_COLORS.get(status, "#5b7bd5")}">{html.escape(status)}</span>'


def _final_states(trace: TaskTrace) -> dict[int, str]:
    states: dict[int, str] = {s.step_id: "pending" for s in trace.plan}
    for span in trace.steps:
        if span.attrs["plan_version"] == trace.plan_version:
            states[span.attrs["step_id"]] = span.status
    if trace.result is not None:
        for s in trace.result.steps:
            states[s.step_id] = s.status
    return states


def _dag_svg(trace: TaskTrace, secrets: Iterable[str]) -> str:
    if not trace.plan:
        return "<p class=muted>No plan.</p>"
    deps = {s.step_id: list(s.depends_on) for s in trace.plan}
    levels = topological_levels(deps)
    pos = {sid: (40 + li * 190, 30 + ri * 60) for li, level in enumerate(levels) for ri, sid in enumerate(level)}
    width = 80 + 190 * len(levels)
    height = 60 + 60 * max(len(level) for level in levels)
    states = _final_states(trace)
    parts = [f'<svg id="dag" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">']
    for s in trace.plan:
        x2, y2 = pos[s.step_id]
        for d in s.depends_on:
            if d in pos:
                x1, y1 = pos[d]
                parts.append(f'<line x1="{x1 + 150}" y1="{y1 + 18}" x2="{x2}" y2="{y2 + 18}" stroke="#999"/>')
    for s in trace.plan:
        x, y = pos[s.step_id]
        crit = s.step_id in trace.critical
        label = _e(f"{s.step_id}: {s.tool_name or 'reasoning'}", secrets)
        parts.append(f'<g class="dag-node" data-step="{s.step_id}"><rect x="{x}" y="{y}" width="150" height="36" rx="6" '
                     f'fill="{STATUS_COLORS.get(states.get(s.step_id, "pending"), "#5b7bd5")}" '
                     f'stroke="{"#111" if crit else "none"}" stroke-width="{3 if crit else 0}"/>'
                     f'<text x="{x + 8}" y="{y + 22}" fill="#fff">{label}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _gantt_svg(trace: TaskTrace) -> str:
    rows = trace.timeline()
    role_rows = [{"label": s.name, "start": s.start - trace.t0, "end": s.end - trace.t0, "status": s.status,
                  "kind": "role"} for s in trace.spans if s.kind == "role"]
    all_rows = role_rows + [{**r, "kind": "step"} for r in rows]
    if not all_rows:
        return "<p class=muted>No timeline.</p>"
    end = max(r["end"] for r in all_rows) or 1.0
    scale = 840 / end  # leaves room for the duration label right of the longest bar
    height = 24 * len(all_rows) + 40
    parts = [f'<svg id="gantt" width="1120" height="{height}" xmlns="http://www.w3.org/2000/svg">']
    for i, r in enumerate(all_rows):
        y = 10 + 24 * i
        x, w = 200 + r["start"] * scale, max((r["end"] - r["start"]) * scale, 2)
        color = "#7a6fd0" if r["kind"] == "role" else STATUS_COLORS.get(r["status"], "#5b7bd5")
        crit = r["kind"] == "step" and r["step_id"] in trace.critical
        label = r["label"] if r["kind"] == "role" else f"{r['label']} {r['tool']}"
        parts.append(f'<g class="gantt-bar" data-kind="{r["kind"]}"><text x="4" y="{y + 14}">{html.escape(label)}</text>'
                     f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="18" fill="{color}" '
                     f'stroke="{"#111" if crit else "none"}" stroke-width="{2 if crit else 0}"/>'
                     f'<text x="{x + w + 4:.1f}" y="{y + 14}" class="muted">{r["end"] - r["start"]:.2f}s</text></g>')
    parts.append(f'<text x="200" y="{height - 6}" class="muted">0 s</text>'
                 f'<text x="1060" y="{height - 6}" class="muted">{end:.2f} s</text></svg>')
    return "".join(parts)


def _steps_table(trace: TaskTrace, secrets: Iterable[str]) -> str:
    rows = ["<table id=steps><tr><th>step</th><th>tool</th><th>input</th><th>status</th><th>output (untrusted "
            "data)</th></tr>"]
    results = {s.step_id: s for s in (trace.result.steps if trace.result else [])}
    for s in trace.plan:
        r = results.get(s.step_id)
        out = "" if r is None else (r.error if r.status != "completed" else r.output)
        rows.append(f"<tr><td>{s.step_id}. {_e(s.description, secrets)}</td><td>{_e(s.tool_name or 'reasoning', secrets)}"
                    f"</td><td><code>{_e(s.tool_input, secrets)}</code></td><td>{_badge(r.status if r else 'pending')}"
                    f"{f' ×{r.attempts}' if r and r.attempts > 1 else ''}</td>"
                    f"<td><pre class=untrusted>{_e(out, secrets)}</pre></td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _reflections(trace: TaskTrace, secrets: Iterable[str]) -> str:
    rows = ["<table id=reflections><tr><th>#</th><th>completeness</th><th>correctness</th><th>format</th>"
            "<th>proposed</th><th>decision</th><th>feedback</th><th>checks</th></tr>"]
    n = 0
    for ev in trace.events:
        if ev.type == "reflected":
            n += 1
            r = ev.payload.reflection
            rows.append(f"<tr><td>{n}</td><td>{r.scores.completeness}</td><td>{r.scores.correctness}</td>"
                        f"<td>{r.scores.format}</td><td>{r.action}</td><td>{ev.payload.decision}</td>"
                        f"<td>{_e(r.feedback or ev.payload.reason, secrets)}</td>"
                        f"<td>{_e(_findings(r.checks), secrets)}</td></tr>")
    rows.append("</table>")
    return "".join(rows) if n else "<p class=muted>No reflection.</p>"


def _findings(findings: Iterable[CheckFinding]) -> str:
    """What the checks held against a review's answer, each by the check that said it (and whether it refused the
    answer or only asked the reviewer once more)."""
    return "; ".join(f"{f.check}{' (asked again)' if f.kind == 'ask_again' else ''}: {f.message}" for f in findings)


def _usage(trace: TaskTrace) -> str:
    if trace.result is None:
        return "<p class=muted>No result yet.</p>"
    u = trace.result.usage
    rows = ["<table id=usage><tr><th>role</th><th>LLM calls</th><th>input tokens</th><th>output tokens</th></tr>"]
    for role, x in sorted(u.by_role.items()):
        rows.append(f"<tr><td>{role}</td><td>{x.llm_calls}</td><td>{x.input_tokens}</td><td>{x.output_tokens}</td></tr>")
    t = u.total
    rows.append(f"<tr><th>total</th><th>{t.llm_calls}</th><th>{t.input_tokens}</th><th>{t.output_tokens}</th></tr></table>")
    return "".join(rows)


def _plan_cuts(trace: TaskTrace) -> list[PlanCut]:
    """The looping plans the task's last outcome reports (each outcome carries all of them so far)."""
    finished = [ev.payload for ev in trace.events if ev.type == "task_finished"]
    return list(finished[-1].plan_cuts) if finished else []


def render_html(trace: TaskTrace, secrets: Iterable[str] = ()) -> str:
    secrets = list(secrets)
    r = trace.result
    summary = ""
    if r is not None:
        summary = (f"<p>{_badge(r.status)} <b>{html.escape(r.stopped_reason)}</b> — wall {r.timings.wall_s:.2f}s, "
                   f"{r.usage.total.llm_calls} LLM calls, {r.replans} replans</p>")
        for label, value in (("answer", r.answer), ("question", r.question), ("error", r.error)):
            if value:
                summary += f"<p><b>{label}:</b> {_e(value, secrets)}</p>"
    summary += "".join(f"<p><b>plan cut:</b> {_e(cut.describe(), secrets)}</p>" for cut in _plan_cuts(trace))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>tetrarch trace {html.escape(trace.task_id)}"
            f"</title><style>{_CSS}</style></head><body><h1>Task {html.escape(trace.task_id)}</h1>"
            f"<p>{_e(trace.task, secrets)}</p>{summary}"
            f"<h2>Plan v{trace.plan_version} (critical path outlined)</h2>{_dag_svg(trace, secrets)}"
            f"<h2>Timeline</h2>{_gantt_svg(trace)}<h2>Steps</h2>{_steps_table(trace, secrets)}"
            f"<h2>Reflections</h2>{_reflections(trace, secrets)}<h2>Usage by role</h2>{_usage(trace)}"
            "</body></html>")
