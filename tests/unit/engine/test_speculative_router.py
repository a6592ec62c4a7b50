"""The router off the critical path: the planner starts with the router, nothing runs before the route is
``plan``, and a plan the route makes useless is cancelled and charged to the planner (no Ray)."""

from __future__ import annotations

import asyncio
import time

import pytest
from support import wire
from support.local import run_task
from support.tools import ALL

from agents.config import RuntimeConfig
from agents.engine.prefetch import PlanPrefetch, spent_so_far
from agents.llm import FunctionLLM
from agents.llm.base import LLMRequest, Spend, Usage
from agents.roles.messages import PlanCallStarted, PlanCompleted, StepEmitted
from planning.models import Plan, PlanStep
from prompts import count_message_tokens

TWO_CITIES = wire.plan(
    wire.step(1, "lookup", {"city": "Paris"}),
    wire.step(2, "lookup", {"city": "Rome"}),
    wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
)
TASK = "Which is bigger, Paris or Rome, and by how much?"


class Timeline:
    """A scripted model that records when each role's call started and ended; the router takes ``router_s``."""

    def __init__(self, route: str, router_s: float = 0.2) -> None:
        self.route, self.router_s = route, router_s
        self.calls: list[tuple[str, str, float]] = []
        self.planner_prompts: list[LLMRequest] = []

    async def __call__(self, request: LLMRequest) -> str:
        self.calls.append((request.role, "start", time.monotonic()))
        if request.role == "router":
            await asyncio.sleep(self.router_s)
        if request.role == "planner":
            self.planner_prompts.append(request)
        reply = {"router": self.route, "planner": TWO_CITIES, "reflector": wire.reflection(answer="Rome, by 0.7 million.")}
        self.calls.append((request.role, "end", time.monotonic()))
        return reply[request.role]

    def started(self, role: str) -> float:
        return next(t for r, what, t in self.calls if r == role and what == "start")

    def ended(self, role: str) -> float:
        return next(t for r, what, t in self.calls if r == role and what == "end")


def run(script: Timeline, config: RuntimeConfig | None = None, chunk_delay_s: float = 0.02, task: str = TASK):
    llm = FunctionLLM(script, stream_chunk_size=24, chunk_delay_s=chunk_delay_s)
    return asyncio.run(run_task(llm, task, tools=ALL, config=config))


def test_the_planner_starts_with_the_router_and_nothing_runs_before_the_route():
    script = Timeline(wire.route("plan"))
    result, sink = run(script)
    assert result.status == "accepted"
    assert script.started("planner") < script.ended("router")  # off the critical path
    types = [e.type for e in sink.events]
    assert types.index("routed") < types.index("plan_step") < types.index("step_started")
    assert result.usage.total.llm_calls == 3
    assert {r: u.llm_calls for r, u in result.usage.by_role.items()} == {"router": 1, "planner": 1, "reflector": 1}
    assert [s.output for s in result.steps] == [2.1, 2.8, 0.7]


@pytest.mark.parametrize(("route", "status", "task"), [
    (wire.route("direct", answer="4"), "accepted", TASK),
    # a question back needs a task that points at something it does not name (the model's route; agents/checks/numeric/referents.py)
    (wire.route("clarify", answer="Which two cities?"), "clarify", "Which of them is bigger, and by how much?"),
    (wire.route("refuse", reason="harmful"), "refused", TASK),
    (wire.route("plan", confidence=0.2), "clarify", TASK),
])
def test_other_routes_dispatch_nothing_and_charge_the_cancelled_plan(route: str, status: str, task: str):
    script = Timeline(route)
    result, sink = run(script, chunk_delay_s=0.5, task=task)  # the plan is still streaming when the route arrives
    assert result.status == status
    types = [e.type for e in sink.events]
    assert "plan_step" not in types and "step_started" not in types and result.steps == []
    planner = result.usage.by_role["planner"]
    prompt_tokens = count_message_tokens(script.planner_prompts[0].messages)
    assert (planner.llm_calls, planner.input_tokens) == (1, prompt_tokens)
    assert result.usage.total.llm_calls == 2  # router + the abandoned plan: honest, not hidden


def test_a_plan_abandoned_mid_stream_is_charged_its_written_tokens():
    step = PlanStep(step_id=1, description="x", tool_name="lookup", tool_input={"city": "Rome"})
    started = Spend(Usage(llm_calls=1, input_tokens=500), ({"role": "planner"},))
    items = [PlanCallStarted(started), StepEmitted(step, 12), StepEmitted(step, 30)]
    assert spent_so_far(items).usage == Usage(llm_calls=1, input_tokens=500, output_tokens=30)
    # a repair round starts a second call: both prompts count, output only from the current one
    second = started + Spend(Usage(input_tokens=40, output_tokens=30)) + started
    assert spent_so_far([*items, PlanCallStarted(second), StepEmitted(step, 7)]).usage == \
        Usage(llm_calls=2, input_tokens=1040, output_tokens=37)
    done = Spend(Usage(llm_calls=1, input_tokens=500, output_tokens=44))
    assert spent_so_far([*items, PlanCompleted(Plan(steps=[step]), done)]) == done


def test_speculation_off_or_unaffordable_plans_after_the_router():
    script = Timeline(wire.route("plan"))
    result, _ = run(script, RuntimeConfig(speculative_planning=False))
    assert result.status == "accepted" and script.started("planner") > script.ended("router")
    capped = Timeline(wire.route("direct", answer="4"))
    result, _ = run(capped, RuntimeConfig(max_llm_calls=1))
    assert result.status == "accepted" and [r for r, what, _ in capped.calls if what == "start"] == ["router"]


def test_a_planner_failure_while_buffered_reaches_the_execution():
    async def broken():
        yield PlanCallStarted(Spend())
        raise RuntimeError("planner actor gone")

    async def read() -> list:
        prefetch = PlanPrefetch(broken())
        await asyncio.sleep(0.01)
        return [item async for item in prefetch]

    with pytest.raises(RuntimeError, match="planner actor gone"):
        asyncio.run(read())


def test_a_replayed_plan_is_not_kept_and_an_abandoned_one_is_charged_what_it_read():
    step = PlanStep(step_id=1, description="x", tool_name="lookup", tool_input={"city": "Rome"})
    started = Spend(Usage(llm_calls=1, input_tokens=500), ({"role": "planner"},))
    done = Spend(Usage(llm_calls=1, input_tokens=500, output_tokens=44))
    items = [PlanCallStarted(started), StepEmitted(step, 12), PlanCompleted(Plan(steps=[step]), done)]

    async def stream(upto: int):
        for item in items[:upto]:
            yield item
        await asyncio.sleep(60)  # a call still streaming: what abandon cancels

    async def main() -> tuple[list, int, Spend]:
        replayed = PlanPrefetch(stream(3))
        await asyncio.sleep(0.01)
        got = [item async for item in replayed]
        abandoned = PlanPrefetch(stream(2))
        await asyncio.sleep(0.01)
        return got, len(replayed._items), await abandoned.abandon()

    got, kept, spend = asyncio.run(main())
    assert got == items and kept == 0  # what the replay handed on is no longer held
    assert spend.usage == Usage(llm_calls=1, input_tokens=500, output_tokens=12)
    assert spend.calls[0]["role"] == "planner"
