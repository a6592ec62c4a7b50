"""Chrome trace-event JSON (opens in Perfetto / chrome://tracing): complete ("X") events with durations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.trace.model import TaskTrace, redact

__all__ = ["to_chrome_trace"]


def to_chrome_trace(trace: TaskTrace, secrets: Iterable[str] = ()) -> dict[str, Any]:
    lanes: dict[str, int] = {}
    events: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
                                     "args": {"name": f"task {trace.task_id}"}}]
    for span in trace.spans:
        lane = span.lane if span.kind == "role" else f"step {span.attrs['step_id']}"
        if lane not in lanes:
            lanes[lane] = len(lanes) + 1
            events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": lanes[lane], "args": {"name": lane}})
        args = {k: redact(v, secrets) if isinstance(v, str) else v for k, v in span.attrs.items()}
        events.append({"name": span.name, "cat": span.kind, "ph": "X", "pid": 1, "tid": lanes[lane],
                       "ts": round((span.start - trace.t0) * 1e6, 1),
                       "dur": round(max(span.end - span.start, 0.0) * 1e6, 1), "args": {**args, "status": span.status}})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"task_id": trace.task_id, "status": trace.status}}
