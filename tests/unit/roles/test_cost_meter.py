"""The money check where the prompt is known: ``MeteredLLM`` refuses a model call whose prompt would pass the
cap before the model sees it, across the several calls of one role call (repair rounds), and counts streams
closed early."""

from __future__ import annotations

import asyncio

import pytest
from support import wire

from agents.config.prices import CostBudget, PriceTable
from agents.errors import CostBudgetExceeded, UnpricedModelError
from agents.llm import FunctionLLM, LLMReply, LLMRequest
from agents.llm._tool_calls import request_tokens
from agents.llm.base import Usage
from agents.llm.profile import SMALL_LOCAL
from agents.roles.cost_meter import MeteredLLM, metered, model_name
from agents.roles.json_call import call_json
from planning.parse import parse_router_decision
from prompts import count_tokens

PRICES = PriceTable(prices={"m": (1000.0, 4000.0)})  # $0.001 a prompt token: a call costs cents
ASK = LLMRequest(role="router", messages=[{"role": "user", "content": "Which is bigger, Paris or Rome?"}])


def _prompt_usd(request: LLMRequest) -> float:
    return request_tokens(request) * 1000.0 / 1e6


def test_a_call_that_would_pass_the_cap_never_reaches_the_model():
    seen = []
    llm = FunctionLLM(lambda r: seen.append(r) or "ok", model="m")
    cap = _prompt_usd(ASK) * 0.99
    with pytest.raises(CostBudgetExceeded) as info:
        asyncio.run(metered(llm, CostBudget(PRICES, cap, 0.0)).complete(ASK))
    assert seen == [] and info.value.role == "router" and info.value.prompt_tokens == request_tokens(ASK)
    assert info.value.spend.usage.llm_calls == 0


def test_no_cap_no_meter_and_the_meter_keeps_the_models_profile():
    llm = FunctionLLM(lambda r: "ok", model="m", profile=SMALL_LOCAL)
    assert metered(llm, None) is llm
    meter = metered(llm, CostBudget(PRICES, 1.0, 0.0))
    assert isinstance(meter, MeteredLLM) and meter.profile is SMALL_LOCAL and model_name(meter) == "m"


def test_a_repair_round_is_checked_with_the_first_rounds_cost_and_the_refusal_carries_it():
    replies = iter(["not json", wire.route()])
    llm = FunctionLLM(lambda r: next(replies), model="m")
    first_cost = _prompt_usd(ASK) + 2 * 4000.0 / 1e6  # "not json": 2 output tokens at $0.004
    budget = CostBudget(PRICES, first_cost + _prompt_usd(ASK), spent_usd=0.0)  # the longer repair won't fit
    with pytest.raises(CostBudgetExceeded) as info:
        asyncio.run(call_json(metered(llm, budget), role="router", messages=ASK.messages,
                              parse=parse_router_decision))
    exc = info.value
    assert exc.spent_usd == pytest.approx(first_cost)
    assert exc.spend.usage.llm_calls == 1 and exc.spend.calls[0]["reply_text"] == "not json"
    assert exc.spend.calls[0]["model"] == "m"
    # With room for both, the same reply is repaired.
    replies = iter(["not json", wire.route()])
    call = asyncio.run(call_json(metered(llm, CostBudget(PRICES, 1.0, 0.0)), role="router",
                                 messages=ASK.messages, parse=parse_router_decision))
    assert call.value.route == "plan" and call.spend.usage.llm_calls == 2


def test_a_stream_closed_early_counts_its_prompt_and_what_it_wrote():
    llm = FunctionLLM(lambda r: "a b c d e f g h", model="m", stream_chunk_size=2)
    meter = MeteredLLM(llm, CostBudget(PRICES, 10.0, 0.0))

    async def first_piece() -> str:
        stream = meter.stream(ASK)
        piece = await stream.__anext__()
        await stream.aclose()
        return piece

    assert asyncio.run(first_piece()) == "a "
    assert meter.spent_usd == pytest.approx(_prompt_usd(ASK) + count_tokens("a ") * 4000.0 / 1e6)
    assert meter.spend.calls[0]["error"] == "abandoned"


def test_a_reply_from_an_unpriced_model_stops_the_next_call():
    other = LLMReply(text="ok", usage=Usage(llm_calls=1, input_tokens=5), model="m-other")
    llm = FunctionLLM(lambda r: other, model="m")
    meter = MeteredLLM(llm, CostBudget(PRICES, 10.0, 0.0))
    asyncio.run(meter.complete(ASK))
    assert meter.cost_usd is None
    with pytest.raises(UnpricedModelError, match="'m-other'") as info:
        asyncio.run(meter.complete(ASK))
    assert info.value.spend.usage.llm_calls == 1


def test_model_name_looks_through_wrappers():
    class Wrapper:
        def __init__(self, inner):
            self.inner = inner

    assert model_name(Wrapper(Wrapper(FunctionLLM(lambda r: "", model="gpt-x")))) == "gpt-x"
    assert model_name(object()) == ""
