"""Live OpenTelemetry spans of a running task (``Observability(otel=True)``): a sink decorator that turns each
event and LLM-call record into spans the moment the runner emits it, in the GenAI agent conventions
(``agents.trace.genai``).

Spans are emitted in the process where the task's runner runs, through that process's global TracerProvider:
the caller's own process with the in-process runtime, the Supervisor actor on Ray — where
``Observability.otel_setup`` ("module:function") installs the provider (docs/observability.md). Timestamps come
from the events and records (the clock of the process that produced them), so spans line up with the store's
trace. Exporters see a span when it ends: a step's when the step ends, the task's when the run ends. Every span
is ended when the run ends, fails or is cancelled (``close``).
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from agents.engine.sink import TaskSink
from agents.engine.task_state import TaskState
from agents.events import AnyEvent
import agents.trace.genai as genai

__all__ = ["SpanSink", "live_spans", "run_setup"]

_setups_done: set[str] = set()
_setup_lock = threading.Lock()


def run_setup(path: str | None) -> None:
    """Call the ``module:function`` that installs the TracerProvider, once per process."""
    if not path:
        return
    with _setup_lock:
        if path in _setups_done:
            return
        module, _, name = path.partition(":")
        getattr(importlib.import_module(module), name or "setup")()
        _setups_done.add(path)


def _ns(t: float) -> int:
    return int(t * 1e9)


class _TaskSpans:
    """The open spans of one run and the rules that open and close them."""

    def __init__(self, tracer: Any, otel: Any, state: TaskState, content: bool) -> None:
        self._tracer, self._otel, self._content = tracer, otel, content
        self.ids = genai.Ids(state.task_id, state.session_id)
        self._run, self._plan_version = state.run, state.plan_version or 1
        # A first run starts at submit (its router call may be recorded before its first event); a continued
        # run at its first write.
        self._t0: float | None = state.submitted_at if state.run == 1 else None
        self._root: Any = None
        self._ctx: Any = None
        self._steps: dict[tuple[int, int, int], Any] = {}
        # A continued run re-reads its plan from the checkpoint, not from plan_step events.
        self._calls: dict[tuple[int, int], dict[str, Any]] = {
            (self._plan_version, s.step_id): {"tool": s.tool_name, "args": s.tool_input} for s in state.plan_steps}
        self._plan_items: dict[int, list[float]] = {}
        self._planned: set[int] = set()
        self._plan_span_obj: Any = None

    def _open_root(self, ts: float) -> None:
        if self._root is None:
            start = min(ts, self._t0) if self._t0 else ts
            self._root = self._tracer.start_span(genai.AGENT_SPAN, start_time=_ns(start),
                                                 attributes=genai.agent_attributes(self.ids, run=self._run))
            self._ctx = self._otel.set_span_in_context(self._root)

    def _child(self, name: str, start: float, attributes: dict[str, Any], context: Any = None) -> Any:
        return self._tracer.start_span(name, context=context or self._ctx, start_time=_ns(start), attributes=attributes)

    def on_event(self, ev: AnyEvent) -> None:
        self._open_root(ev.ts)
        p = ev.payload
        match ev.type:
            case "task_submitted":
                pass  # the root span opened at its time
            case "step_started" | "step_finished" | "step_failed" | "plan_step":
                self._on_step_event(ev)
            case "routed":
                self._root.set_attribute("tetrarch.route", p.route)
                self._root.add_event("routed", {"route": p.route, "confidence": p.confidence}, _ns(ev.ts))
            case "reflected":
                self._plan_done(self._plan_version, ev.ts)
                r = p.reflection
                self._root.add_event("review", {"decision": p.decision, "completeness": r.scores.completeness,
                                                "correctness": r.scores.correctness, "format": r.scores.format,
                                                "overall_pass": r.overall_pass}, _ns(ev.ts))
            case "replanned":
                self._plan_done(self._plan_version, ev.ts)
                self._plan_version = p.plan_version
                self._root.add_event("replan", {"plan_version": p.plan_version, "feedback": p.feedback[:500]}, _ns(ev.ts))
            case "escalated":
                name = "escalation" if p.answer is None else "escalation_answered"
                attrs = {"kind": p.kind, "question": p.question[:500]}
                if p.answered_by is not None:
                    attrs["answered_by"] = p.answered_by
                self._root.add_event(name, attrs, _ns(ev.ts))
            case "task_finished":
                self._finish(p.status, p.stopped_reason, p.error, ev.ts)

    def _on_step_event(self, ev: AnyEvent) -> None:
        p = ev.payload
        match ev.type:
            case "plan_step":
                self._plan_items.setdefault(p.plan_version, []).append(ev.ts)
                self._calls[(p.plan_version, p.step.step_id)] = {"tool": p.step.tool_name, "args": p.step.tool_input}
            case "step_started":
                self._start_step(p.plan_version, p.step_id, p.attempt, ev.ts)
            case "step_finished" | "step_failed":
                key = (p.plan_version, p.step_id, p.attempt)
                span = self._steps.pop(key, None)
                if span is None and p.started_at is None:
                    # Never ran (its dependency failed, the task stopped first): no tool call to show.
                    self._root.add_event("step_not_run", {"tetrarch.step_id": p.step_id, "reason": p.error[:300]},
                                         _ns(ev.ts))
                    return
                span = span or self._start_step(*key, p.started_at or ev.ts, keep=False)
                if ev.type == "step_finished":
                    if self._content:
                        span.set_attribute("gen_ai.tool.call.result", p.output_preview)
                else:
                    span.set_attribute("error.type", p.error_kind)
                    span.set_status(self._otel.Status(self._otel.StatusCode.ERROR, p.error[:300]))
                span.end(end_time=_ns(p.finished_at or ev.ts))

    def _start_step(self, plan_version: int, step_id: int, attempt: int, ts: float, keep: bool = True) -> Any:
        call = self._calls.get((plan_version, step_id), {})
        attrs = genai.tool_attributes(self.ids, plan_version=plan_version, step_id=step_id, attempt=attempt,
                                      tool=call.get("tool"), arguments=call.get("args"), content=self._content)
        span = self._child(genai.tool_span_name(call.get("tool")), ts, attrs)
        if keep:
            self._steps[(plan_version, step_id, attempt)] = span
        return span

    def on_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        for record in records:
            end = record.get("ended_at")
            if end is None:
                continue
            self._open_root(float(end))
            usage = record.get("usage") or {}
            role, model = str(record.get("role") or ""), str(record.get("model") or "")
            start = float(end) - float(record.get("latency_s") or 0.0)
            attrs = genai.chat_attributes(self.ids, role, model, usage.get("input_tokens") or 0,
                                          usage.get("output_tokens") or 0)
            first_call = role == "planner" and self._plan_version not in self._planned
            parent = self._plan_span(start) if first_call else None
            span = self._child(genai.chat_span_name(model), start, attrs, parent)
            if record.get("error"):
                span.set_attribute("error.type", str(record.get("error_type") or "llm_error"))
                span.set_status(self._otel.Status(self._otel.StatusCode.ERROR, str(record["error"])[:300]))
            span.end(end_time=_ns(float(end)))
            if parent is not None:
                self._plan_span_obj.end(end_time=_ns(max(float(end), *self._plan_items.get(self._plan_version, [0.0]))))

    def _plan_span(self, start: float) -> Any:
        """The plan span of the current plan version, opened for its planner call (the context to put it in)."""
        version = self._plan_version
        items = self._plan_items.get(version, [])
        self._planned.add(version)
        self._plan_span_obj = self._child(genai.PLAN_SPAN, min([start, *items]),
                                          genai.plan_attributes(self.ids, version, len(items)))
        return self._otel.set_span_in_context(self._plan_span_obj)

    def _plan_done(self, version: int, ts: float) -> None:
        """A plan written without a planner call (a cached template, a plan code wrote) still gets its span."""
        items = self._plan_items.get(version)
        if items and version not in self._planned:
            self._planned.add(version)
            self._child(genai.PLAN_SPAN, min(items), genai.plan_attributes(self.ids, version, len(items))
                        ).end(end_time=_ns(max(items)))

    def _finish(self, status: str, reason: str, error: str | None, ts: float) -> None:
        self._plan_done(self._plan_version, ts)
        for span in self._steps.values():  # still running: the task stopped without them
            span.set_status(self._otel.Status(self._otel.StatusCode.ERROR, f"the task stopped ({reason})"))
            span.end(end_time=_ns(ts))
        self._steps.clear()
        self._root.set_attribute("tetrarch.status", status)
        self._root.set_attribute("tetrarch.stopped_reason", reason)
        if status == "failed":
            self._root.set_attribute("error.type", reason)
            self._root.set_status(self._otel.Status(self._otel.StatusCode.ERROR, (error or reason)[:300]))
        self._root.end(end_time=_ns(ts))
        self._root = None

    def close(self, why: str, now: float) -> None:
        """End whatever is open (the run was cancelled or raised before ``task_finished``)."""
        if self._root is not None:
            self._finish("failed", why, None, now)


class SpanSink:
    """A ``TaskSink`` that writes through to ``inner`` and turns what it writes into spans."""

    def __init__(self, inner: TaskSink, spans: _TaskSpans) -> None:
        self._inner, self._spans = inner, spans

    @property
    def generation(self) -> int:
        return self._inner.generation

    def emit(self, payload: BaseModel, checkpoint: TaskState | None = None,
             delta: dict[str, Any] | None = None) -> AnyEvent:
        event = self._inner.emit(payload, checkpoint, delta)
        self._spans.on_event(event)
        return event

    def put_output(self, plan_version: int, step_id: int, attempt: int, output: Any) -> None:
        self._inner.put_output(plan_version, step_id, attempt, output)

    def outputs(self, plan_version: int) -> dict[int, Any]:
        return self._inner.outputs(plan_version)

    def record_llm_calls(self, records: Sequence[dict[str, Any]]) -> None:
        self._inner.record_llm_calls(records)
        self._spans.on_llm_calls(records)

    def add_secret(self, value: str) -> None:
        self._inner.add_secret(value)

    def __getattr__(self, name: str) -> Any:  # flush, lost, events… of the sink underneath
        return getattr(self._inner, name)


def live_spans(sink: TaskSink, state: TaskState, *, enabled: bool, content: bool = False,
               setup: str | None = None, tracer_provider: Any = None,
               clock: Callable[[], float] | None = None,
               ) -> tuple[TaskSink, Callable[[asyncio.Future[Any]], None] | None]:
    """``(the sink the runner writes to, a done-callback for its asyncio task)``; ``sink`` itself and no
    callback when not ``enabled`` (a no-op one cost every run a function, a context copy and a callback to
    schedule)."""
    if not enabled:
        return sink, None
    import time

    from opentelemetry import trace as otel

    run_setup(setup)
    provider = tracer_provider or otel.get_tracer_provider()
    spans = _TaskSpans(provider.get_tracer("tetrarch"), otel, state, content)
    now = clock or time.time

    def done(task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            spans.close("cancelled", now())
        elif task.exception() is not None:
            spans.close(f"internal_error: {type(task.exception()).__name__}", now())
        else:
            spans.close("internal_error: the run ended without task_finished", now())

    return SpanSink(sink, spans), done
