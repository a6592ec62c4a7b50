"""A planner reply that loops (the embedded model repeating one search and a reasoning step up to step 41) is cut
at the third copy of the call: the stream is closed there, the plan completes with the steps written before,
the abandoned text is charged, and the task's outcome says so. Two copies, and repeated writes, are a plan. A
model profile's ``Strategy.LOOP_CUT``: the hosted default reads every reply whole."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator
from typing import Any

from support import tools as T
from support import wire
from support.local import run_task

from agents.cli.progress import ProgressView
from agents.config import RuntimeConfig
from agents.events import PlanCut, parse_event
from agents.llm import HOSTED, FunctionLLM, LLMReply, LLMRequest, ModelProfile, Strategy
from agents.llm.base import Usage
from agents.roles.messages import PlanCompleted, PlanItem, StepEmitted
from agents.roles.planner import Planner
from agents.tools import ToolRegistry
from agents.trace.html import render_html
from agents.trace.model import build_trace
from planning.loops import RepeatedCall
from prompts import count_message_tokens, count_tokens

TOOLS = ToolRegistry([T.lookup, T.subtract, T.append_note])
LOOPS = ModelProfile(strategies=frozenset({Strategy.LOOP_CUT}))


def looping_plan(last: int = 41) -> str:
    """The benchmark's loop: the same lookup, then a reasoning step on it, again and again."""
    steps = []
    for sid in range(1, last + 1, 2):
        steps.append(wire.step(sid, "lookup", {"city": "Paris"}, description="Population of Paris"))
        if sid + 1 <= last:
            steps.append(wire.step(sid + 1, None, deps=[sid], description="What is the population?"))
    return wire.plan(*steps)


class Watched:
    """Passes a FunctionLLM's stream through, remembering what the planner read and whether it closed it."""

    def __init__(self, inner: FunctionLLM) -> None:
        self.inner = inner
        self.profile = inner.profile
        self.read = ""
        self.finished = False
        self.closed = False
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        return await self.inner.complete(request)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        self.requests.append(request)
        try:
            async for item in self.inner.stream(request):
                if isinstance(item, LLMReply):
                    self.finished = True
                else:
                    self.read += item
                yield item
        finally:
            self.closed = True


def plan_items(llm: Any, *, stream: bool = True) -> tuple[list[PlanItem], list[bool]]:
    """Every item of one plan, and whether the model's stream was closed when each was yielded."""
    options = RuntimeConfig(stream_plan=stream).planner_options()
    planner = Planner(llm, TOOLS.schemas(), TOOLS.catalog_text(), options)

    async def scenario() -> tuple[list[PlanItem], list[bool]]:
        items, closed = [], []
        async for item in planner.plan("t", "How many people live in Paris?"):
            items.append(item)
            closed.append(getattr(llm, "closed", True))
        return items, closed

    return asyncio.run(scenario())


def test_a_looping_stream_is_closed_at_the_third_copy_and_the_plan_ends_before_it() -> None:
    text = looping_plan()
    llm = Watched(FunctionLLM(lambda r: text, stream_chunk_size=16, profile=LOOPS))
    items, closed = plan_items(llm)
    assert [i.step.step_id for i in items if isinstance(i, StepEmitted)] == [1, 2, 3, 4]
    done = items[-1]
    assert isinstance(done, PlanCompleted)
    assert [s.step_id for s in done.plan.steps] == [1, 2, 3, 4]
    assert done.cut == RepeatedCall(step_id=5, tool_name="lookup", repeats=(1, 3))
    assert closed[-1], "the stream was still open when the plan completed: the model server stays busy"
    assert not llm.finished and len(llm.read) < len(text) // 3, "the planner read on past the loop"
    # charged like every abandoned stream: the prompt, and the text the model had written when it was closed
    assert done.spend.usage == Usage(llm_calls=1, input_tokens=count_message_tokens(llm.requests[0].messages),
                                     output_tokens=count_tokens(llm.read))
    (record,) = done.spend.calls
    assert record["reply_text"] == llm.read and record["error"].startswith("abandoned: step 5 repeats the lookup")


def test_a_whole_reply_read_at_once_is_cut_the_same_way_and_charged_its_usage() -> None:
    text = looping_plan(9)
    items, _ = plan_items(FunctionLLM(lambda r: text, profile=LOOPS), stream=False)
    done = items[-1]
    assert isinstance(done, PlanCompleted) and [s.step_id for s in done.plan.steps] == [1, 2, 3, 4]
    assert done.cut is not None and done.cut.step_id == 5
    assert done.spend.usage.output_tokens == count_tokens(text) and done.spend.calls[0]["error"] is None


def test_two_identical_calls_pass_through_untouched() -> None:
    text = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Paris"}),
                     wire.step(3, "subtract", {"a": "$step_1_result", "b": "$step_2_result"}, deps=[1, 2]))
    llm = Watched(FunctionLLM(lambda r: text, stream_chunk_size=16, profile=LOOPS))
    items, _ = plan_items(llm)
    done = items[-1]
    assert isinstance(done, PlanCompleted) and done.cut is None
    assert [s.step_id for s in done.plan.steps] == [1, 2, 3] and llm.finished
    assert done.spend.calls[0]["error"] is None and done.spend.usage.output_tokens == count_tokens(text)


def test_a_write_repeated_three_times_is_three_side_effects_not_a_loop() -> None:
    text = wire.plan(*(wire.step(sid, "append_note", {"note": "checked"}) for sid in (1, 2, 3, 4)))
    items, _ = plan_items(FunctionLLM(lambda r: text, stream_chunk_size=16, profile=LOOPS))
    done = items[-1]
    assert isinstance(done, PlanCompleted) and done.cut is None and len(done.plan.steps) == 4


def test_a_hosted_model_s_looping_reply_is_read_whole_and_not_cut() -> None:
    text = looping_plan(9)
    llm = Watched(FunctionLLM(lambda r: text, stream_chunk_size=16, profile=HOSTED))
    items, _ = plan_items(llm)
    done = items[-1]
    assert isinstance(done, PlanCompleted) and done.cut is None and llm.finished
    assert [s.step_id for s in done.plan.steps] == list(range(1, 10))


def test_the_task_runs_the_steps_before_the_loop_and_its_outcome_reports_the_cut() -> None:
    def script(request: LLMRequest) -> str:
        return {"router": wire.route(), "planner": looping_plan(), "executor": "2.1",
                "reflector": wire.reflection(answer="2.1 million")}[request.role]

    llm = FunctionLLM(script, stream_chunk_size=16, profile=LOOPS)
    result, sink = asyncio.run(run_task(llm, "How many people live in Paris?", tools=[T.lookup, T.subtract]))
    assert result.status == "accepted" and [s.step_id for s in result.plan.steps] == [1, 2, 3, 4]
    assert all(s.status == "completed" for s in result.steps)
    assert result.usage.by_role["planner"].llm_calls == 1
    finished = sink.events[-1]
    assert finished.type == "task_finished"
    cut = PlanCut(plan_version=1, repeated=RepeatedCall(step_id=5, tool_name="lookup", repeats=(1, 3)))
    assert finished.payload.plan_cuts == [cut]
    assert parse_event(finished.model_dump_json()) == finished == pickle.loads(pickle.dumps(finished))
    view = ProgressView()
    lines = [line for ev in sink.events for line in view.feed(ev)]
    assert any("plan cut: plan v1: step 5 repeats the lookup call of steps 1 and 3" in line for line in lines)
    page = render_html(build_trace("t-local", sink.events, sink.llm_calls, result))
    assert "<b>plan cut:</b> plan v1: step 5 repeats the lookup call of steps 1 and 3" in page
