"""Live progress view of a task: one line per event plus a compact DAG status line. Pure rendering
(events in, text out), so it is tested without a terminal."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import assert_never

from agents.engine.step_run import BY_CODE
from agents.events import AnyEvent
from agents.results import TaskResult

__all__ = ["ProgressView", "render_result"]

_MARK = {"pending": "·", "running": "▶", "completed": "✓", "failed": "✗", "skipped": "–"}


@dataclass
class ProgressView:
    t0: float | None = None
    states: dict[int, str] = field(default_factory=dict)
    tools: dict[int, str] = field(default_factory=dict)
    plan_version: int = 1
    kept: set[int] = field(default_factory=set)
    """Steps the last replan kept (their outputs are reused, they do not run again)."""
    answering: bool = False
    """The last thing written is a piece of the answer, on a line still open."""

    def dag_line(self) -> str:
        if not self.states:
            return ""
        cells = " ".join(f"{_MARK[s]}{i}" for i, s in sorted(self.states.items()))
        counts = {k: sum(1 for s in self.states.values() if s == k) for k in ("completed", "running", "pending")}
        return (f"   DAG v{self.plan_version}: {cells}   ({counts['completed']} done, {counts['running']} running, "
                f"{counts['pending']} pending)")

    def text(self, ev: AnyEvent) -> str:
        """What to write for one event: its lines, or a piece of the answer continuing the answer's line (the
        answer is shown as the reviewer writes it)."""
        if ev.type == "answer_delta":
            head = "" if self.answering else self.feed(ev)[0].removesuffix(ev.payload.text)
            self.answering = True
            return head + ev.payload.text
        lines = [line for line in self.feed(ev) if line]
        close, self.answering = ("\n" if self.answering else ""), False
        return close + "".join(line + "\n" for line in lines)

    def feed(self, ev: AnyEvent) -> list[str]:
        """Lines to print for one event."""
        self.t0 = ev.ts if self.t0 is None else self.t0
        t = f"[{ev.ts - self.t0:6.2f}s]"
        p = ev.payload
        match ev.type:
            case "task_submitted":
                return [f"{t} task  {p.task}"]
            case "routed":
                return [f"{t} route {p.route} (confidence {p.confidence:.2f}) {p.reason}".rstrip()]
            case "plan_step":
                s = p.step
                if p.plan_version != self.plan_version:
                    self.plan_version, self.states, self.tools = p.plan_version, {}, {}
                # A step a replan kept (same id and call) is not run again: it stays done.
                self.states[s.step_id] = "completed" if s.step_id in self.kept else "pending"
                self.tools[s.step_id] = s.tool_name or "reasoning"
                call = f"{s.tool_name}({json.dumps(s.tool_input, ensure_ascii=False)})" if s.tool_name else "reasoning"
                deps = f" ← {s.depends_on}" if s.depends_on else ""
                return [f"{t} plan  step {s.step_id}: {call}{deps}"]
            case "step_started":
                self.states[p.step_id] = "running"
                return [f"{t} ▶ step {p.step_id} {self.tools.get(p.step_id, '')} (attempt {p.attempt})", self.dag_line()]
            case "step_finished":
                self.states[p.step_id] = "completed"
                how = "by code, no model call" if p.executor == BY_CODE else f"in {p.finished_at - p.started_at:.2f}s"
                return [f"{t} ✓ step {p.step_id} {how} → {p.output_preview}", self.dag_line()]
            case "step_failed":
                self.states[p.step_id] = "failed"
                return [f"{t} ✗ step {p.step_id} [{p.error_kind}] {p.error}", self.dag_line()]
            case "reflected":
                r = p.reflection
                return [f"{t} reflect {p.decision} (completeness {r.scores.completeness}, correctness "
                        f"{r.scores.correctness}, format {r.scores.format}) {p.reason}".rstrip()]
            case "replanned":
                self.kept = set(p.kept_steps)
                kept = f" (keeps step {', '.join(map(str, p.kept_steps))})" if p.kept_steps else ""
                return [f"{t} replan → plan v{p.plan_version}{kept}: {p.feedback}"]
            case "escalated" if p.answer is not None:
                return [f"{t} answered by {p.answered_by}: {p.answer}"]
            case "escalated":
                return [f"{t} escalated ({p.kind}): {p.question}"]
            case "answer_delta":
                return [f"{t} answer {p.text}"]
            case "answer_reset":
                return [f"{t} answer withdrawn: {p.reason}"]
            case "task_finished":
                cuts = [f"{t} plan cut: {cut.describe()}" for cut in p.plan_cuts]
                return [*cuts, f"{t} done  {p.status} ({p.stopped_reason})"]
            case _:
                assert_never(ev.type)


def render_result(result: TaskResult) -> str:
    u = result.usage
    lines = [f"status: {result.status} ({result.stopped_reason})"]
    if result.answer:
        lines.append(f"answer: {result.answer}")
    if result.question:
        lines.append(f"question: {result.question}")
    if result.error:
        lines.append(f"error: {result.error}")
    roles = ", ".join(f"{role} {x.llm_calls}" for role, x in sorted(u.by_role.items()))
    lines.append(f"usage: {u.total.llm_calls} LLM calls ({roles}); {u.total.input_tokens} input + "
                 f"{u.total.output_tokens} output tokens")
    fd = "-" if result.timings.first_dispatch_s is None else f"{result.timings.first_dispatch_s:.2f}s"
    lines.append(f"timings: wall {result.timings.wall_s:.2f}s, first step dispatched after {fd}, "
                 f"{len(result.steps)} steps, {result.replans} replans")
    lines.append(f"task id: {result.task_id}")
    return "\n".join(lines)
