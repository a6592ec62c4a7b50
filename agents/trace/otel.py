"""OpenTelemetry spans for a finished task, rebuilt from the store, in the same GenAI agent conventions and
names as the live spans (``Observability(otel=True)``; ``agents.trace.genai``): ``invoke_agent tetrarch`` →
``plan`` (holding the planner's ``chat``), ``execute_tool <tool>`` per step attempt, ``chat <model>`` per
router / reviewer / executor call; replans and escalations as events of the task span.

Optional: needs the ``otel`` extra and an exporter the user configures (a TracerProvider). Nothing is sent
anywhere by default — without a configured provider the OpenTelemetry API is a no-op.
"""

from __future__ import annotations

from typing import Any

from agents.trace import genai
from agents.trace.model import Span, TaskTrace

__all__ = ["OTEL_AVAILABLE", "export_otel"]

try:  # pragma: no cover - exercised only with the extra installed
    from opentelemetry import trace as _otel

    OTEL_AVAILABLE = True
except ImportError:
    _otel = None
    OTEL_AVAILABLE = False


def _ns(t: float) -> int:
    return int(t * 1e9)


def _root_events(trace: TaskTrace, root: Any) -> None:
    for ev in trace.events:
        p = ev.payload
        if ev.type == "replanned":
            root.add_event("replan", {"plan_version": p.plan_version, "feedback": p.feedback[:500]}, _ns(ev.ts))
        elif ev.type == "escalated":
            attrs = {"kind": p.kind, "question": p.question[:500]}
            if p.answered_by is not None:
                attrs["answered_by"] = p.answered_by
            root.add_event("escalation" if p.answer is None else "escalation_answered", attrs, _ns(ev.ts))


def _plan_versions(trace: TaskTrace) -> dict[int, list[float]]:
    versions: dict[int, list[float]] = {}
    for ev in trace.events:
        if ev.type == "plan_step":
            versions.setdefault(ev.payload.plan_version, []).append(ev.ts)
    return versions


def _emit_role(tracer: Any, span: Span, ids: genai.Ids, ctx: Any) -> None:
    model = str(span.attrs.get("model") or "")
    attrs = genai.chat_attributes(ids, str(span.attrs.get("role")), model, int(span.attrs.get("input_tokens", 0)),
                                  int(span.attrs.get("output_tokens", 0)))
    child = tracer.start_span(genai.chat_span_name(model), context=ctx, start_time=_ns(span.start), attributes=attrs)
    if span.status == "failed":
        child.set_status(_otel.Status(_otel.StatusCode.ERROR, "the LLM call failed"))
    child.end(end_time=_ns(span.end))


def _emit_step(tracer: Any, span: Span, ids: genai.Ids, ctx: Any, tool_inputs: dict[tuple[int, int], Any],
               content: bool) -> None:
    a = span.attrs
    attrs = genai.tool_attributes(ids, plan_version=a["plan_version"], step_id=a["step_id"], attempt=a["attempt"],
                                  tool=a.get("tool"), arguments=tool_inputs.get((a["plan_version"], a["step_id"])),
                                  result=a.get("output_preview"), content=content)
    child = tracer.start_span(genai.tool_span_name(a.get("tool")), context=ctx, start_time=_ns(span.start),
                              attributes=attrs)
    if span.status == "failed":
        child.set_attribute("error.type", str(a.get("error_kind", "")))
        child.set_status(_otel.Status(_otel.StatusCode.ERROR, str(a.get("error", ""))[:200]))
    child.end(end_time=_ns(span.end))


def export_otel(trace: TaskTrace, tracer_provider: Any = None, *, content: bool = False,
                session_id: str | None = None) -> int:
    """Emit the trace's spans through ``tracer_provider`` (default: the global one). Returns the span count.
    ``content``: put tool arguments and results on the spans (off by default: they may be sensitive)."""
    if not OTEL_AVAILABLE:
        raise RuntimeError("OpenTelemetry is not installed: pip install 'tetrarch[otel]'")
    tracer = (tracer_provider or _otel.get_tracer_provider()).get_tracer("tetrarch")
    ids = genai.Ids(trace.task_id, session_id)
    end = max([s.end for s in trace.spans] + [e.ts for e in trace.events], default=trace.t0)
    root = tracer.start_span(genai.AGENT_SPAN, start_time=_ns(trace.t0), attributes=genai.agent_attributes(ids))
    root.set_attribute("tetrarch.status", trace.status)
    _root_events(trace, root)
    ctx = _otel.set_span_in_context(root)
    versions = _plan_versions(trace)
    planners = [s for s in trace.spans if s.kind == "role" and s.attrs.get("role") == "planner"]
    tool_inputs = {(ev.payload.plan_version, ev.payload.step.step_id): ev.payload.step.tool_input
                   for ev in trace.events if ev.type == "plan_step"}
    count = 1
    for version, items in sorted(versions.items()):
        # The planner calls of a version are those ending before the next version's first step.
        later = min((min(v) for n, v in versions.items() if n > version), default=float("inf"))
        calls = [s for s in planners if s.end <= later]
        planners = [s for s in planners if s.end > later]
        start = min([*items, *(s.start for s in calls)])
        plan = tracer.start_span(genai.PLAN_SPAN, context=ctx, start_time=_ns(start),
                                 attributes=genai.plan_attributes(ids, version, len(items)))
        plan_ctx = _otel.set_span_in_context(plan)
        for call in calls:
            _emit_role(tracer, call, ids, plan_ctx)
        plan.end(end_time=_ns(max([*items, *(s.end for s in calls)])))
        count += 1 + len(calls)
    for span in trace.spans:
        if span.kind == "step":
            _emit_step(tracer, span, ids, ctx, tool_inputs, content)
        elif span.attrs.get("role") != "planner" or span in planners:
            _emit_role(tracer, span, ids, ctx)
        else:
            continue
        count += 1
    root.end(end_time=_ns(end))
    return count
