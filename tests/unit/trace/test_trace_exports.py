"""Trace exports built from the store's event log: HTML page, Chrome trace-event JSON, Gantt PNG, OTel spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import wire
from support.traced import run_stored

from agents.errors import UsageError
from agents.llm import FunctionLLM
from agents.trace.chrome import to_chrome_trace
from agents.trace.cli import load_trace
from agents.trace.cli import main as trace_main
from agents.trace.html import render_html

TWO_CITIES = wire.plan(
    wire.step(1, "lookup", {"city": "Paris"}),
    wire.step(2, "lookup", {"city": "Rome"}),
    wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
)
TASK = "Which is bigger, Paris or Rome, and by how much?"


def _script(reflector: str, planner: str = TWO_CITIES):
    return FunctionLLM(lambda r: {"router": wire.route(), "planner": planner, "reflector": reflector}[r.role])


SCENARIOS = {
    "accepted": (_script(wire.reflection(answer="Rome, by 0.7 million")), "accepted"),
    "escalated": (_script(wire.reflection("escalate", scores=(2, 2, 2), answer=None,
                                          feedback="Which census year do you mean?")), "escalated"),
    "failed": (_script(wire.reflection(), planner="this is not a plan at all"), "failed"),
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """One store holding a finished, an escalated and a failed task."""
    db = tmp_path_factory.mktemp("trace") / "tasks.db"
    out = {}
    for name, (llm, status) in SCENARIOS.items():
        task_id, result, _ = run_stored(db, llm, TASK)
        assert result.status == status, (name, result)
        out[name] = (db, task_id)
    return out


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_html_page_shows_dag_timeline_and_usage_offline(stored, name):
    db, task_id = stored[name]
    trace = load_trace(task_id, db)
    page = render_html(trace)
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    # Self-contained: nothing is fetched when the page is viewed.
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert "<script" not in page
    if name == "failed":
        assert "No plan." in page and "invalid" in page.lower()
    else:
        assert page.count('class="dag-node"') == 3
        assert page.count('class="gantt-bar" data-kind="step"') == 3
        assert page.count('class="gantt-bar" data-kind="role"') == 3  # router, planner, reflector
    assert "<table id=usage>" in page


def _check_trace_event_format(doc: dict) -> None:
    """The rules of the Trace Event Format that Perfetto and chrome://tracing enforce."""
    assert isinstance(doc["traceEvents"], list) and doc["traceEvents"]
    open_b: dict[tuple, int] = {}
    for ev in doc["traceEvents"]:
        assert ev["ph"] in {"X", "M", "B", "E"}, ev
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        if ev["ph"] == "M":
            assert ev["name"] in {"process_name", "thread_name"} and isinstance(ev["args"]["name"], str)
            continue
        assert isinstance(ev["name"], str) and ev["ts"] >= 0
        if ev["ph"] == "X":
            assert ev["dur"] >= 0
        key = (ev["pid"], ev["tid"], ev["name"])
        open_b[key] = open_b.get(key, 0) + {"B": 1, "E": -1}.get(ev["ph"], 0)
        assert open_b[key] >= 0, f"E without B: {ev}"
    assert all(v == 0 for v in open_b.values()), "every B needs its E"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_chrome_trace_follows_the_trace_event_format(stored, name):
    db, task_id = stored[name]
    doc = json.loads(json.dumps(to_chrome_trace(load_trace(task_id, db))))
    _check_trace_event_format(doc)
    kinds = {ev.get("cat") for ev in doc["traceEvents"] if ev["ph"] == "X"}
    assert "role" in kinds
    if name != "failed":
        steps = [ev for ev in doc["traceEvents"] if ev.get("cat") == "step"]
        assert sorted(ev["args"]["step_id"] for ev in steps) == [1, 2, 3]
        # Steps 1 and 2 are independent; 3 starts only after both ended.
        by_id = {ev["args"]["step_id"]: ev for ev in steps}
        assert by_id[3]["ts"] >= max(by_id[i]["ts"] + by_id[i]["dur"] for i in (1, 2)) - 1.0


def test_cli_writes_every_export(stored, tmp_path, capsys):
    db, task_id = stored["accepted"]
    html, chrome, png = tmp_path / "t.html", tmp_path / "t.json", tmp_path / "t.png"
    assert trace_main([task_id, "--store", str(db), "--html", str(html), "--chrome", str(chrome),
                       "--png", str(png)]) == 0
    assert 'class="dag-node"' in html.read_text()
    _check_trace_event_format(json.loads(chrome.read_text()))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000


def test_unknown_task_is_a_clear_error(stored):
    db, _ = stored["accepted"]
    with pytest.raises(UsageError, match="no task 'nope'.*tetrarch tasks"):
        load_trace("nope", db)


def test_otel_spans_follow_genai_conventions(stored):
    sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agents.trace.otel import export_otel

    db, task_id = stored["accepted"]
    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    count = export_otel(load_trace(task_id, db), provider)
    spans = exporter.get_finished_spans()
    assert count == len(spans) == 1 + 1 + 3 + 3  # task, its plan, three LLM calls, three steps
    root = next(s for s in spans if s.parent is None)
    assert root.name == "invoke_agent tetrarch" and root.attributes["gen_ai.conversation.id"] == task_id
    plan = next(s for s in spans if s.name == "plan")
    planner = next(s for s in spans if s.attributes.get("tetrarch.role") == "planner")
    assert planner.parent.span_id == plan.context.span_id and plan.parent.span_id == root.context.span_id
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert sorted(s.attributes["tetrarch.role"] for s in chats) == ["planner", "reflector", "router"]
    assert all(s.attributes["gen_ai.usage.input_tokens"] > 0 for s in chats)
    assert all(s.attributes["gen_ai.provider.name"] == "openai" and "gen_ai.system" not in s.attributes
               for s in chats)
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert sorted(s.attributes["gen_ai.tool.name"] for s in tools) == ["lookup", "lookup", "subtract"]
    assert all(s.parent.span_id == root.context.span_id for s in tools)


def test_the_post_hoc_export_names_spans_as_the_live_ones_do(tmp_path):
    pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from support.otel import global_exporter

    from agents.config import Observability, RuntimeConfig
    from agents.trace.otel import export_otel

    live = global_exporter()
    db = tmp_path / "t.db"
    task_id, result, _ = run_stored(db, SCENARIOS["accepted"][0], TASK,
                                    config=RuntimeConfig(store_path=db, observability=Observability(otel=True)))
    assert result.status == "accepted"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_otel(load_trace(task_id, db), provider)

    def shape(spans):
        by_id = {s.context.span_id: s.name for s in spans}
        return sorted((s.name, by_id.get(s.parent.span_id) if s.parent else None) for s in spans)

    assert shape(live.get_finished_spans()) == shape(exporter.get_finished_spans())
