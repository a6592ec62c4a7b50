"""OpenTelemetry spans for a finished task: task → role LLM calls → steps.

Optional: needs the ``otel`` extra and an exporter the user configures (a TracerProvider). Nothing is sent
anywhere by default — without a configured provider the OpenTelemetry API is a no-op. LLM-call spans
follow the GenAI semantic conventions (gen_ai.operation.name, gen_ai.request.model, gen_ai.usage.*).
"""

from __future__ import annotations

from typing import Any

from agents.trace.model import TaskTrace

__all__ = ["export_otel", "OTEL_AVAILABLE"]

try:  # pragma: no cover - exercised only with the extra installed
    from opentelemetry import trace as _otel

    OTEL_AVAILABLE = True
except ImportError:
    _otel = None
    OTEL_AVAILABLE = False


def _ns(t: float) -> int:
    return int(t * 1e9)


def export_otel(trace: TaskTrace, tracer_provider: Any = None) -> int:
    """Emit the trace's spans through ``tracer_provider`` (default: the global one). Returns the span count."""
    if not OTEL_AVAILABLE:
        raise RuntimeError("OpenTelemetry is not installed: pip install 'tetrarch[otel]'")
    tracer = (tracer_provider or _otel.get_tracer_provider()).get_tracer("tetrarch")
    end = max((s.end for s in trace.spans), default=trace.t0)
    root = tracer.start_span(f"task {trace.task_id}", start_time=_ns(trace.t0),
                             attributes={"tetrarch.task_id": trace.task_id, "tetrarch.status": trace.status})
    ctx = _otel.set_span_in_context(root)
    count = 1
    for span in trace.spans:
        if span.kind == "role":
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                     "gen_ai.request.model": span.attrs.get("model") or "unknown",
                     "gen_ai.usage.input_tokens": int(span.attrs.get("input_tokens", 0)),
                     "gen_ai.usage.output_tokens": int(span.attrs.get("output_tokens", 0)),
                     "tetrarch.role": str(span.attrs.get("role"))}
            name = f"chat {attrs['gen_ai.request.model']}"
        else:
            attrs = {"tetrarch.step_id": span.attrs["step_id"], "tetrarch.attempt": span.attrs["attempt"],
                     "tetrarch.plan_version": span.attrs["plan_version"], "tetrarch.tool": span.attrs.get("tool") or "",
                     "tetrarch.status": span.status}
            name = f"step {span.attrs['step_id']} {span.attrs.get('tool') or 'reasoning'}"
        child = tracer.start_span(name, context=ctx, start_time=_ns(span.start), attributes=attrs)
        if span.status == "failed":
            child.set_status(_otel.Status(_otel.StatusCode.ERROR, str(span.attrs.get("error", ""))[:200]))
        child.end(end_time=_ns(span.end))
        count += 1
    root.end(end_time=_ns(end))
    return count
