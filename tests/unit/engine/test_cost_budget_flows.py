"""Budgets in money through the real engine and roles, in-process: ``result.usage.cost_usd`` is each call's
tokens at its model's price (the live view's column, to the cent), and under ``max_cost_usd`` no model call
of any role starts unless its prompt fits beside what the task has spent — the router, the planner, an
executor's reasoning steps, a reviewer's repair round — over random prices, caps and reply sizes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import tools as T
from support import wire
from support.local import run_task
from support.tiers import examples
from support.traced import run_stored

from agents import Orchestrator
from agents.config import RuntimeConfig
from agents.config.prices import PriceTable
from agents.events import StepFailedPayload
from agents.llm import FunctionLLM, LLMRequest
from agents.llm._tool_calls import request_tokens
from agents.roles.messages import StepErrorKind
from agents.store import Store
from agents.ui.reader import TaskReader
from prompts import count_tokens

PRICE = (2.0, 8.0)
"""USD per million input and output tokens of the model "m"."""
CHAIN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                  wire.step(2, None, deps=[1], description="Say the population of Paris in words"),
                  wire.step(3, None, deps=[2], description="Say it again, shorter"))


class Bill:
    """The model behind a ``FunctionLLM``: the replies of ``script``, and every call it was sent, in order,
    with its prompt and reply tokens as the provider bills them (``FunctionLLM`` counts them the same
    way)."""

    def __init__(self, script: Callable[[LLMRequest], str]) -> None:
        self.script = script
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, request: LLMRequest) -> str:
        text = self.script(request)
        self.calls.append((request.role, request_tokens(request), count_tokens(text)))
        return text

    def costs(self, price: tuple[float, float] = PRICE) -> list[tuple[float, float]]:
        """(prompt cost, whole cost) of each call."""
        return [(i * price[0] / 1e6, (i * price[0] + o * price[1]) / 1e6) for _, i, o in self.calls]


def accepting(request: LLMRequest) -> str:
    return {"router": wire.route(), "planner": CHAIN, "executor": "about two million",
            "reflector": wire.reflection(answer="Paris has 2.1 million people")}[request.role]


def run(bill: Bill, config: RuntimeConfig, model: str = "m"):
    result, _ = asyncio.run(run_task(FunctionLLM(bill, model=model), "How many people live in Paris?",
                                     config=config))
    return result


def priced(**kw) -> RuntimeConfig:
    return RuntimeConfig(prices={"m": list(PRICE)}, speculative_planning=False, **kw)


def test_cost_is_every_calls_tokens_at_its_price_by_role_and_the_live_view_shows_the_same(tmp_path):
    bill = Bill(accepting)
    db = tmp_path / "t.db"
    task_id, result, _ = run_stored(db, FunctionLLM(bill, model="m"), "How many people live in Paris?",
                                    config=priced(store_path=db))
    assert result.status == "accepted" and [role for role, _, _ in bill.calls] == [
        "router", "planner", "executor", "executor", "reflector"]
    assert result.usage.cost_usd == pytest.approx(sum(whole for _, whole in bill.costs()))
    by_role = {role: sum(c for (r, _, _), (_, c) in zip(bill.calls, bill.costs()) if r == role)
               for role in ("router", "planner", "executor", "reflector")}
    assert result.usage.cost_by_role == pytest.approx(by_role)
    [row] = TaskReader(Store(db), prices=PriceTable(prices={"m": PRICE})).rows()
    assert row.cost_usd == pytest.approx(result.usage.cost_usd, rel=1e-12)
    assert TaskReader(Store(db)).rows()[0].cost_usd == result.usage.cost_usd  # no --prices: as it ran


def test_without_prices_no_cost_and_an_unpriced_model_is_unknown_not_zero():
    assert run(Bill(accepting), RuntimeConfig()).usage.cost_usd is None
    result = run(Bill(accepting), priced(), model="other")
    assert result.status == "accepted" and result.usage.cost_usd is None  # no cap: it runs, its cost unknown
    assert run(Bill(lambda r: wire.route("direct", answer="4")), priced()).usage.cost_usd > 0
    assert run(Bill(accepting), RuntimeConfig(prices={"*": [0, 0]})).usage.cost_usd == 0.0


def test_the_public_api_in_process(tmp_path):
    full = Bill(accepting)
    run(full, priced())
    costs = full.costs()
    config = RuntimeConfig(store_path=tmp_path / "t.db", prices={"m": list(PRICE)},
                           speculative_planning=False,
                           max_cost_usd=sum(whole for _, whole in costs[:4]) + costs[4][0] / 2)
    orch = Orchestrator(llm=FunctionLLM(accepting, model="m"), tools=T.ALL, config=config,
                        runtime="inprocess")
    try:
        result = orch.run("How many people live in Paris?", timeout=30)
    finally:
        orch.shutdown()
    assert (result.status, result.stopped_reason) == ("failed", "max_cost_usd")
    assert result.error.startswith("the reflector's next model call (m, ")
    assert result.usage.cost_usd == pytest.approx(sum(whole for _, whole in costs[:4]))
    assert [s.status for s in result.steps] == ["completed"] * 3


def test_an_unpriced_model_under_a_cap_stops_before_its_first_call_naming_it_and_the_fix():
    bill = Bill(accepting)
    result = run(bill, priced(max_cost_usd=1.0), model="gpt-unlisted")
    assert bill.calls == [] and (result.status, result.stopped_reason) == ("failed", "max_cost_usd")
    assert "'gpt-unlisted', which RuntimeConfig.prices does not price" in result.error
    assert '"gpt-unlisted": [input, output]' in result.error
    assert result.usage.cost_usd == 0.0


@pytest.mark.parametrize("refused", [0, 1, 2, 3, 4])
def test_the_call_that_would_pass_the_cap_is_never_made_whichever_role_makes_it(refused):
    """Caps set so that calls 0..refused-1 fit and call ``refused`` (router, planner, the two reasoning
    steps, the reviewer) does not: the model never sees it, the task stops saying what it spent and what that
    call would have cost."""
    full = Bill(accepting)
    run(full, priced())
    costs = full.costs()
    spent = sum(whole for _, whole in costs[:refused])
    bill = Bill(accepting)
    result = run(bill, priced(max_cost_usd=spent + costs[refused][0] * 0.999))
    assert len(bill.calls) == refused and bill.calls == full.calls[:refused]
    assert (result.status, result.stopped_reason) == ("failed", "max_cost_usd")
    role = full.calls[refused][0]
    assert f"the {role}'s next model call (m, {full.calls[refused][1]} prompt tokens)" in result.error
    assert result.usage.cost_usd == pytest.approx(spent)
    if role == "executor":  # the refused reasoning step failed with the refusal; nothing ran after it
        failed = [s for s in result.steps if s.status == "failed"]
        assert len(failed) == 1 and "max_cost_usd" in failed[0].error


def test_a_reviewers_repair_round_is_refused_with_the_first_rounds_cost_booked():
    replies = iter(["this is not a review", wire.reflection()])

    def script(request: LLMRequest) -> str:
        return next(replies) if request.role == "reflector" else accepting(request)

    full = Bill(script)
    run(full, priced())
    costs = full.costs()
    assert [r for r, _, _ in full.calls][-2:] == ["reflector", "reflector"]  # the review, then its repair
    spent = sum(whole for _, whole in costs[:-1])
    replies = iter(["this is not a review", wire.reflection()])
    bill = Bill(script)
    result = run(bill, priced(max_cost_usd=spent + costs[-1][0] * 0.5))
    assert bill.calls == full.calls[:-1] and result.stopped_reason == "max_cost_usd"
    assert result.usage.by_role["reflector"].llm_calls == 1 and result.usage.cost_usd == pytest.approx(spent)
    assert "the reflector's next model call" in result.error


def test_a_task_already_over_its_cap_dispatches_nothing_more():
    """A call's output is known only after it: the reviewer's long reply takes the spend over the cap, and the
    retry it asks for is not even dispatched (no call could fit any more)."""
    full = Bill(accepting)
    run(full, priced())
    costs = full.costs()
    cap = sum(whole for _, whole in costs[:4]) + costs[4][0] * 1.01  # the review fits; its long reply not
    retry = wire.reflection("retry_step", (2, 2, 2), answer=None, retry_step=2, modification="again",
                            feedback="word " * 400)
    bill = Bill(lambda r: retry if r.role == "reflector" else accepting(r))
    result = run(bill, priced(max_cost_usd=cap))
    assert [r for r, _, _ in bill.calls] == ["router", "planner", "executor", "executor", "reflector"]
    assert result.stopped_reason == "max_cost_usd" and result.usage.cost_usd > cap
    assert "so no further model call was made" in result.error
    assert all(s.status != "running" for s in result.steps)


def test_a_step_error_kind_is_one_the_step_failed_event_takes():
    # The executor's error kinds and the event's are two Literals (roles may not import events): a kind only
    # the first knew ("max_cost_usd") once crashed the task when its step_failed event was written.
    assert get_args(StepErrorKind) == get_args(StepFailedPayload.model_fields["error_kind"].annotation)


_SIZES = st.lists(st.integers(0, 300), min_size=1, max_size=12)


@settings(max_examples=examples(25), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(price_in=st.floats(0.5, 50.0), price_out=st.floats(0.0, 200.0), calls_worth=st.floats(0.2, 14.0),
       sizes=_SIZES)
def test_no_call_starts_unless_it_fits_and_the_task_stops_at_the_one_that_would_not(price_in, price_out,
                                                                                   calls_worth, sizes):
    """A task that never ends by itself (the reviewer always asks to retry a reasoning step, with replies of
    random lengths), random prices and a cap of a random number of calls' worth: every call the model was
    sent fit beside the spend when it started; the task stops on the cap (no other cap is set), and its cost
    is the bill's."""
    lengths = iter(sizes * 200)

    def script(request: LLMRequest) -> str:
        pad = "x " * next(lengths)
        if request.role == "reflector":
            return wire.reflection("retry_step", (2, 2, 2), answer=None, retry_step=2, modification="again",
                                   feedback=pad)
        if request.role == "executor":
            return pad or "ok"
        return accepting(request)

    bill = Bill(script)
    cap = calls_worth * 1200 * price_in / 1e6  # prompts here are 400-2,000 tokens
    config = RuntimeConfig(prices={"m": [price_in, price_out]}, max_cost_usd=cap, speculative_planning=False,
                           token_budget=None, max_llm_calls=None, max_step_retries=10**6, loop_window=10**6,
                           max_consecutive_errors=10**6)
    result = run(bill, config)
    spent = 0.0
    for prompt, whole in bill.costs((price_in, price_out)):
        assert spent + prompt <= cap * (1 + 1e-9)
        spent += whole
    assert (result.status, result.stopped_reason) == ("failed", "max_cost_usd")
    assert result.usage.cost_usd == pytest.approx(spent)
