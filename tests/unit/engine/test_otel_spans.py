"""Live OpenTelemetry spans while a task runs (Observability(otel=True)): the GenAI agent conventions' names
and attributes, parents, overlap of parallel steps, and no span left open however the run ends."""

from __future__ import annotations

import asyncio
import time

import pytest
from support import wire
from support.local import local_runtime

from agents.config import RuntimeConfig
from agents.engine.otel_spans import live_spans
from agents.engine.sink import MemorySink
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm import FunctionLLM, ScriptedLLM

sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

PARALLEL = wire.plan(wire.step(1, "sleepy", {"seconds": 0.3, "label": "a"}),
                     wire.step(2, "sleepy", {"seconds": 0.3, "label": "b"}),
                     wire.step(3, "lookup", {"city": "Rome"}, deps=[1, 2]))


class OpenSpans(sdk.SpanProcessor):
    """Counts spans started and not ended (what a viewer would show as still running forever)."""

    def __init__(self) -> None:
        self.open: set[int] = set()

    def on_start(self, span, parent_context=None) -> None:
        self.open.add(span.context.span_id)

    def on_end(self, span) -> None:
        self.open.discard(span.context.span_id)


def _traced(llm, task="two waits, then Rome", *, content=False, cancel_after=None, session_id=None):
    exporter, opened = InMemorySpanExporter(), OpenSpans()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(opened)
    config = RuntimeConfig()
    state = TaskState(task_id="t-otel", task=task, submitted_at=time.time(), session_id=session_id)
    sink, done = live_spans(MemorySink("t-otel"), state, enabled=True, content=content, tracer_provider=provider)

    async def go():
        runner = TaskRunner(state, config=config, runtime=local_runtime(llm, config=config), sink=sink)
        task = asyncio.ensure_future(runner.run())
        task.add_done_callback(done)
        if cancel_after is not None:
            await asyncio.sleep(cancel_after)
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.sleep(0)  # done callbacks run on the next loop turn

    asyncio.run(go())
    return exporter.get_finished_spans(), opened.open


def _script(*reflections):
    return ScriptedLLM({"router": [wire.route()], "planner": [PARALLEL] * len(reflections),
                        "reflector": list(reflections)})


def test_span_kinds_names_and_attributes_follow_the_genai_agent_conventions():
    spans, still_open = _traced(_script(wire.reflection(answer="a b")))
    assert still_open == set()
    names = sorted(s.name for s in spans)
    assert names.count("invoke_agent tetrarch") == 1 and names.count("plan") == 1
    assert names.count("execute_tool sleepy") == 2 and names.count("execute_tool lookup") == 1
    chats = [s for s in spans if s.attributes["gen_ai.operation.name"] == "chat"]
    assert sorted(s.attributes["tetrarch.role"] for s in chats) == ["planner", "reflector", "router"]
    assert {s.attributes["gen_ai.agent.name"] for s in chats} == {"router", "planner", "reviewer"}
    for s in chats:
        assert s.name == f"chat {s.attributes['gen_ai.request.model']}"
        assert s.attributes["gen_ai.provider.name"] == "openai"
        assert s.attributes["gen_ai.usage.input_tokens"] > 0 and s.attributes["gen_ai.usage.output_tokens"] > 0
    for s in spans:
        assert "gen_ai.system" not in s.attributes  # the convention's old name
        assert s.attributes["gen_ai.conversation.id"] == s.attributes["tetrarch.task_id"] == "t-otel"
    tools = [s for s in spans if s.attributes["gen_ai.operation.name"] == "execute_tool"]
    assert len({s.attributes["gen_ai.tool.call.id"] for s in tools}) == 3
    assert {s.attributes["gen_ai.tool.name"] for s in tools} == {"sleepy", "lookup"}
    assert all("gen_ai.tool.call.arguments" not in s.attributes and "gen_ai.tool.call.result" not in s.attributes
               for s in tools)
    root = next(s for s in spans if s.name == "invoke_agent tetrarch")
    assert root.attributes["gen_ai.agent.name"] == "tetrarch" and root.attributes["tetrarch.status"] == "accepted"
    assert [e.name for e in root.events] == ["routed", "review"]


def test_steps_are_siblings_under_the_task_and_parallel_ones_overlap():
    spans, _ = _traced(_script(wire.reflection(answer="a b")))
    root = next(s for s in spans if s.parent is None)
    plan = next(s for s in spans if s.name == "plan")
    by_role = {s.attributes.get("tetrarch.role"): s for s in spans if s.attributes["gen_ai.operation.name"] == "chat"}
    assert plan.parent.span_id == root.context.span_id
    assert by_role["planner"].parent.span_id == plan.context.span_id  # the plan span holds the planner's call
    assert by_role["router"].parent.span_id == by_role["reflector"].parent.span_id == root.context.span_id
    tools = sorted((s for s in spans if s.name.startswith("execute_tool")), key=lambda s: s.attributes["tetrarch.step_id"])
    assert all(s.parent.span_id == root.context.span_id for s in tools)
    first, second, last = tools
    assert first.start_time < second.end_time and second.start_time < first.end_time  # ran at the same time
    assert last.start_time >= max(first.end_time, second.end_time)  # waited for both
    assert all(root.start_time <= s.start_time and s.end_time <= root.end_time for s in spans)


def test_tool_arguments_and_results_only_when_opted_in():
    spans, _ = _traced(_script(wire.reflection()), content=True)
    rome = next(s for s in spans if s.name == "execute_tool lookup")
    assert rome.attributes["gen_ai.tool.call.arguments"] == '{"city": "Rome"}'
    assert rome.attributes["gen_ai.tool.call.result"] == "2.8"


def test_a_replan_and_an_escalation_are_span_events_and_each_plan_version_has_a_span():
    spans, still_open = _traced(_script(wire.reflection("replan", scores=(2, 2, 2), feedback="again"),
                                        wire.reflection("escalate", scores=(2, 2, 2), answer=None, feedback="?")))
    root = next(s for s in spans if s.parent is None)
    assert still_open == set()
    assert [e.name for e in root.events if e.name != "review"] == ["routed", "replan", "escalation"]
    assert next(e for e in root.events if e.name == "replan").attributes["plan_version"] == 2
    assert sorted(s.attributes["tetrarch.plan_version"] for s in spans if s.name == "plan") == [1, 2]
    assert root.attributes["tetrarch.status"] == "escalated"


def test_a_failed_step_is_an_error_span():
    plan = wire.plan(wire.step(1, "always_fails", {"x": 1}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                 "reflector": wire.reflection("escalate", scores=(1, 1, 1), answer=None)}[r.role])
    spans, still_open = _traced(llm)
    failed = next(s for s in spans if s.name == "execute_tool always_fails")
    assert failed.status.status_code is StatusCode.ERROR and failed.attributes["error.type"] == "permanent"
    assert still_open == set()


def test_a_cancelled_task_leaves_no_span_open():
    slow = wire.plan(wire.step(1, "sleepy", {"seconds": 5, "label": "a"}), wire.step(2, "sleepy", {"seconds": 5, "label": "b"}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": slow, "reflector": wire.reflection()}[r.role])
    spans, still_open = _traced(llm, cancel_after=0.8)
    assert still_open == set()
    root = next(s for s in spans if s.parent is None)
    assert root.status.status_code is StatusCode.ERROR and root.attributes["tetrarch.stopped_reason"] == "cancelled"
    cut = [s for s in spans if s.name == "execute_tool sleepy"]
    assert len(cut) == 2 and all(s.status.status_code is StatusCode.ERROR for s in cut)


def test_a_session_turn_names_its_conversation():
    spans, _ = _traced(_script(wire.reflection()), session_id="s-42")
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {"s-42"}
    assert {s.attributes["tetrarch.session_id"] for s in spans} == {"s-42"}


def test_off_by_default_the_sink_is_untouched():
    sink = MemorySink("t")
    assert live_spans(sink, TaskState(task_id="t", task="x", submitted_at=0.0), enabled=False) == (sink, None)
    assert RuntimeConfig().observability.otel is False


def test_otel_setup_must_name_a_function():
    with pytest.raises(ValueError, match="module:function"):
        RuntimeConfig(observability={"otel": True, "otel_setup": "myapp.tracing"})


def test_an_answered_escalation_continues_under_a_new_run_span_that_says_who_answered(tmp_path):
    from support.background import BackgroundCore
    from support.otel import global_exporter

    exporter = global_exporter()
    plan = wire.plan(wire.step(1, "delete_record", {"record_id": "r1"}))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "reflector": wire.reflection()}[r.role])
    config = RuntimeConfig(store_path=tmp_path / "t.db", observability={"otel": True})
    with BackgroundCore(tmp_path / "t.db", llm, config=config) as core:
        task_id = core.submit("delete r1")
        assert core.result(task_id).status == "escalated"
        run = core.respond(task_id, "approve", by="alice")
        assert core.result(task_id, run=run).status == "accepted"
    roots = sorted((s for s in exporter.get_finished_spans() if s.name == "invoke_agent tetrarch"),
                   key=lambda s: s.attributes["tetrarch.run"])
    assert [(r.attributes["tetrarch.run"], r.attributes["tetrarch.status"]) for r in roots] == [(1, "escalated"),
                                                                                               (2, "accepted")]
    assert [e.name for e in roots[0].events][-1] == "escalation"
    answered = roots[1].events[0]
    assert answered.name == "escalation_answered" and answered.attributes["answered_by"] == "alice"
    tools = [s for s in exporter.get_finished_spans() if s.name == "execute_tool delete_record"]
    assert len(tools) == 1 and tools[0].parent.span_id == roots[1].context.span_id


def test_a_failed_task_ends_its_span_as_an_error():
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": "no plan at all", "reflector": wire.reflection()}[r.role])
    spans, still_open = _traced(llm)
    root = next(s for s in spans if s.parent is None)
    assert still_open == set()
    assert root.attributes["tetrarch.status"] == "failed" and root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == root.attributes["tetrarch.stopped_reason"] == "invalid_llm_output"


def test_a_step_that_never_ran_has_no_tool_span():
    plan = wire.plan(wire.step(1, "always_fails", {"x": 1}), wire.step(2, "lookup", {"city": "Rome"}, deps=[1]))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan,
                                 "reflector": wire.reflection("escalate", scores=(1, 1, 1), answer=None)}[r.role])
    spans, still_open = _traced(llm)
    assert still_open == set()
    assert [s.name for s in spans if s.name.startswith("execute_tool")] == ["execute_tool always_fails"]
