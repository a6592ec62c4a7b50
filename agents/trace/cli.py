"""`tetrarch trace TASK_ID [--html F] [--chrome F] [--png F]` from the event log in the store."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from agents.config import default_store_path, missing_store
from agents.errors import UsageError
from agents.trace.model import TaskTrace, build_trace

__all__ = ["main", "load_trace"]


def load_trace(task_id: str, store_path: Path) -> TaskTrace:
    from agents.store import Store

    if problem := missing_store(store_path):
        raise UsageError(problem)
    store = Store(store_path, create=False)
    try:
        events = store.events(task_id)
        if not events:
            raise UsageError(f"no task {task_id!r} in {store_path}; list tasks with `tetrarch tasks --store ...`")
        return build_trace(task_id, events, store.llm_calls(task_id), store.get_result(task_id))
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tetrarch trace")
    p.add_argument("task_id")
    p.add_argument("--store", type=Path, default=default_store_path())
    p.add_argument("--html", type=Path, help="write a self-contained HTML page")
    p.add_argument("--chrome", type=Path, help="write Chrome trace-event JSON (Perfetto, chrome://tracing)")
    p.add_argument("--png", type=Path, help="write the Gantt timeline as PNG")
    p.add_argument("--otel", action="store_true", help="emit OpenTelemetry spans to the configured exporter")
    args = p.parse_args(argv)
    trace = load_trace(args.task_id, args.store)
    if args.html:
        from agents.trace.html import render_html

        args.html.write_text(render_html(trace))
        print(f"wrote {args.html}")
    if args.chrome:
        from agents.trace.chrome import to_chrome_trace

        args.chrome.write_text(json.dumps(to_chrome_trace(trace)))
        print(f"wrote {args.chrome}")
    if args.png:
        from agents.trace.gantt import plot_gantt

        wall = trace.result.timings.wall_s if trace.result else None
        plot_gantt(trace.role_timeline() + trace.timeline(), args.png, title=f"task {trace.task_id} ({trace.status})", wall_s=wall,
                   critical=trace.critical)
        print(f"wrote {args.png}")
    if args.otel:
        from agents.trace.otel import export_otel

        print(f"emitted {export_otel(trace)} spans")
    if not (args.html or args.chrome or args.png or args.otel):
        for span in trace.spans:
            print(f"{span.start - trace.t0:8.3f}s {span.end - span.start:7.3f}s  {span.kind:4} {span.name:24} "
                  f"{span.status}")
    return 0
