"""Budgets in money on Ray: each model call is checked inside the role's actor, where its prompt is, so a
call that would pass ``max_cost_usd`` never reaches the model there either — an executor's reasoning step in
an executor actor, the router in its actor (its refusal crossing Ray intact) — and the cost is the live
view's."""

from __future__ import annotations

import asyncio
import json

import pytest
from support import wire
from support.local import run_task
from support.tools import ALL

from agents import Orchestrator, RuntimeConfig
from agents.config.prices import PriceTable
from agents.llm import FunctionLLM, LLMRequest
from agents.llm._tool_calls import request_tokens
from agents.store import Store
from agents.ui.reader import TaskReader
from prompts import count_tokens

pytestmark = pytest.mark.ray

PRICES = {"m": [2.0, 8.0]}
TASK = "How many people live in Paris?"
CHAIN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                  wire.step(2, None, deps=[1], description="Say the population of Paris in words"),
                  wire.step(3, None, deps=[2], description="Say it again, shorter"))


def reply(request: LLMRequest) -> str:
    return {"router": wire.route(), "planner": CHAIN, "executor": "about two million",
            "reflector": wire.reflection(answer="Paris has 2.1 million people")}[request.role]


def logged(log: str):
    """``reply``, writing each call the model was sent (in whichever process sends it) to ``log``."""

    def fn(request: LLMRequest) -> str:
        text = reply(request)
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps([request.metadata.get("task_id", ""), request.role]) + "\n")
        return text

    return fn


def bill_in_process() -> list[tuple[float, float]]:
    """(prompt cost, whole cost) of each call of the task, measured in-process (its prompts are Ray's)."""
    calls: list[tuple[int, int]] = []

    def fn(request: LLMRequest) -> str:
        text = reply(request)
        calls.append((request_tokens(request), count_tokens(text)))
        return text

    config = RuntimeConfig(prices=PRICES, speculative_planning=False)
    result, _ = asyncio.run(run_task(FunctionLLM(fn, model="m"), TASK, config=config))
    assert result.status == "accepted" and len(calls) == 5
    return [(i * 2.0 / 1e6, (i * 2.0 + o * 8.0) / 1e6) for i, o in calls]


def test_calls_over_the_cap_are_refused_inside_the_actors(ray_session, tmp_path):
    costs = bill_in_process()
    cap = sum(whole for _, whole in costs[:3]) + costs[3][0] * 0.999  # the 2nd reasoning step's won't fit
    log = tmp_path / "calls.jsonl"
    log.touch()
    db = tmp_path / "t.db"
    config = RuntimeConfig(store_path=db, prices=PRICES, max_cost_usd=cap, speculative_planning=False)
    orch = Orchestrator(llm=FunctionLLM(logged(str(log)), model="m"), tools=ALL, config=config)
    try:
        stepped = orch.submit(TASK)
        stepped_result = stepped.result(timeout=60)
        # A task whose router prompt alone costs more than the cap: refused in the router actor.
        long = orch.submit("How many people live in Paris? " + "Answer from the lookup tool. " * 700)
        long_result = long.result(timeout=60)
    finally:
        orch.shutdown()
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert [role for task_id, role in sent if task_id == stepped.task_id] == ["router", "planner", "executor"]
    assert (stepped_result.status, stepped_result.stopped_reason) == ("failed", "max_cost_usd")
    assert "the executor's next model call (m, " in stepped_result.error
    assert stepped_result.usage.cost_usd == pytest.approx(sum(whole for _, whole in costs[:3]))
    [failed] = [s for s in stepped_result.steps if s.status == "failed"]
    assert failed.step_id == 3 and "max_cost_usd" in failed.error

    assert [role for task_id, role in sent if task_id == long.task_id] == []
    assert (long_result.stopped_reason, long_result.usage.cost_usd) == ("max_cost_usd", 0.0)
    assert long_result.error.startswith("the router's next model call (m, ")  # the role's error, not Ray's

    rows = {row.task_id: row for row in TaskReader(Store(db), prices=PriceTable(prices=PRICES)).rows()}
    assert rows[stepped.task_id].cost_usd == pytest.approx(stepped_result.usage.cost_usd, rel=1e-12)
