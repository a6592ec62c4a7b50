"""A task's trace, rebuilt from the store: spans of role calls and step attempts, the critical path, usage.

Everything else in ``agents.trace`` renders this one model (HTML page, Chrome trace JSON, Gantt PNG,
OpenTelemetry spans).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.events import AnyEvent
from agents.results import TaskResult
from dag.graph import critical_path
from planning.models import PlanStep

__all__ = ["Span", "TaskTrace", "build_trace", "redact"]

_SECRET_PATTERNS = [re.compile(r"sk-[A-Za-z0-9_\-]{16,}"), re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-]{16,}")]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask API-key-shaped strings and every given secret (defence in depth: the store redacts too)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("[REDACTED]", text)
    return text


@dataclass(frozen=True, slots=True)
class Span:
    name: str
    kind: str  # "role" | "step"
    start: float
    end: float
    status: str
    lane: str
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskTrace:
    task_id: str
    task: str
    status: str
    t0: float
    spans: list[Span]
    plan: list[PlanStep]
    plan_version: int
    critical: list[int]
    result: TaskResult | None
    events: list[AnyEvent]

    @property
    def steps(self) -> list[Span]:
        return [s for s in self.spans if s.kind == "step"]

    def role_timeline(self) -> list[dict[str, Any]]:
        """Gantt rows of every LLM call (router, planner, executor reasoning/repair, reflector)."""
        return [{"step_id": None, "tool": s.attrs.get("role") or s.lane, "status": "llm" if s.status == "completed"
                 else s.status, "start": s.start - self.t0, "end": s.end - self.t0,
                 "name": f"{s.attrs.get('role')} LLM ({s.attrs.get('input_tokens', 0)}→"
                         f"{s.attrs.get('output_tokens', 0)} tok)"}
                for s in self.spans if s.kind == "role"]

    def timeline(self) -> list[dict[str, Any]]:
        """Gantt rows (seconds since submit) of every step attempt of every plan version."""
        return [{"step_id": s.attrs["step_id"], "tool": s.attrs.get("tool") or "reasoning", "status": s.status,
                 "start": s.start - self.t0, "end": s.end - self.t0,
                 "label": f"v{s.attrs['plan_version']}#{s.attrs['step_id']}.{s.attrs['attempt']}"}
                for s in self.steps]


def _role_spans(llm_calls: Sequence[dict[str, Any]]) -> list[Span]:
    spans = []
    for i, call in enumerate(llm_calls):
        end = call.get("ended_at")
        if end is None:
            continue
        usage = call.get("usage") or {}
        spans.append(Span(name=f"{call.get('role')} LLM call", kind="role", start=end - float(call.get("latency_s") or 0),
                          end=end, status="failed" if call.get("error") else "completed", lane=str(call.get("role")),
                          attrs={"role": call.get("role"), "model": call.get("model", ""), "index": i,
                                 "input_tokens": usage.get("input_tokens", 0),
                                 "output_tokens": usage.get("output_tokens", 0)}))
    return spans


def _step_spans(events: Sequence[AnyEvent]) -> tuple[list[Span], dict[int, list[PlanStep]]]:
    plans: dict[int, list[PlanStep]] = {}
    tools: dict[tuple[int, int], str | None] = {}
    spans = []
    for ev in events:
        p = ev.payload
        if ev.type == "plan_step":
            plans.setdefault(p.plan_version, []).append(p.step)
            tools[(p.plan_version, p.step.step_id)] = p.step.tool_name
        elif ev.type in ("step_finished", "step_failed") and p.started_at is not None:
            status = "completed" if ev.type == "step_finished" else "failed"
            if ev.type == "step_failed" and p.error_kind == "cancelled":
                status = "cancelled"  # stopped by a cancel of its task, not a failure of its own
            attrs = {"step_id": p.step_id, "attempt": p.attempt, "plan_version": p.plan_version,
                     "tool": tools.get((p.plan_version, p.step_id))}
            if ev.type == "step_failed":
                attrs.update(error=p.error, error_kind=p.error_kind)
            else:
                attrs.update(output_preview=p.output_preview)
            spans.append(Span(name=f"step {p.step_id}", kind="step", start=p.started_at,
                              end=p.finished_at or p.started_at, status=status, lane="executors", attrs=attrs))
    return spans, plans


def build_trace(task_id: str, events: Sequence[AnyEvent], llm_calls: Sequence[dict[str, Any]] = (),
                result: TaskResult | None = None) -> TaskTrace:
    if not events:
        raise ValueError(f"task {task_id!r} has no events in this store")
    steps, plans = _step_spans(events)
    version = max(plans) if plans else 0
    plan = plans.get(version, [])
    last = {(s.attrs["plan_version"], s.attrs["step_id"]): s for s in steps}
    durations = {sid: last[(version, sid)].end - last[(version, sid)].start
                 for sid in (s.step_id for s in plan) if (version, sid) in last}
    deps = {s.step_id: [d for d in s.depends_on if d in durations] for s in plan if s.step_id in durations}
    critical = critical_path(deps, durations)[1] if deps else []
    first = events[0]
    task = first.payload.task if first.type == "task_submitted" else ""
    finished = [e for e in events if e.type == "task_finished"]
    status = finished[-1].payload.status if finished else "running"
    return TaskTrace(task_id=task_id, task=task, status=status, t0=first.ts,
                     spans=sorted(_role_spans(llm_calls) + steps, key=lambda s: s.start), plan=plan,
                     plan_version=version, critical=list(critical), result=result, events=list(events))
