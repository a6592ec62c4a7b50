"""``ModelProfile.stop_at_plan``: the router's (JSON) reply is read until it has chosen a trusted plan, then
closed; every other reply is read whole, and a backend that sends the whole reply at once keeps its reason."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, LLMReply, LLMRequest, ModelProfile
from agents.roles.router import Router
from planning.settled_route import STOPPED_REASON
from prompts import count_tokens

TASK = "Find the populations of Paris and Rome and subtract the smaller from the larger."
PLAN = json.dumps({"route": "plan", "confidence": 0.95, "reason": "two figures to look up and subtract",
                   "answer": None})


def json_router(stop: bool = True) -> ModelProfile:
    """The JSON router form (router/v7, the small model's) with or without stopping at a settled plan."""
    return ModelProfile(prompts={"router": "v7"}, reply_forms={"router": "json"}, stop_at_plan=stop)


class CountingStream:
    """FunctionLLM's stream in 4-character pieces, counting what the router read and whether it closed early."""

    def __init__(self, reply: str, *, stop: bool = True) -> None:
        self.llm = FunctionLLM(lambda request: reply, stream_chunk_size=4, profile=json_router(stop))
        self.profile = self.llm.profile
        self.read: list[str] = []
        self.closed_early = False
        self.completes = 0

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.completes += 1
        return await self.llm.complete(request)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        finished = False
        try:
            async for piece in self.llm.stream(request):
                if isinstance(piece, str):
                    self.read.append(piece)
                else:
                    finished = True  # the final reply: everything was read
                yield piece
        finally:
            self.closed_early = not finished


def _route(llm: object, *, min_confidence: float = 0.6):  # type: ignore[no-untyped-def]
    config = RuntimeConfig(router_min_confidence=min_confidence)
    router = Router(llm, "calculator: arithmetic", config.router_options())  # type: ignore[arg-type]
    return asyncio.run(router.route("t", TASK))


def test_a_plan_route_stops_the_reply_after_its_confidence_and_counts_what_was_written() -> None:
    llm = CountingStream(PLAN)
    result = _route(llm)
    decision = result.value
    assert (decision.route, decision.confidence, decision.answer) == ("plan", 0.95, None)
    assert decision.reason == STOPPED_REASON
    read = "".join(llm.read)
    # closed within a piece or two of the confidence: the reason's words were never read
    assert llm.closed_early and "two figures" not in read and len(read) <= PLAN.index('"reason"') + 8
    assert result.spend.usage.output_tokens == count_tokens(read) and result.spend.usage.llm_calls == 1
    (record,) = result.spend.calls
    assert record["reply_text"] == read and record["error"] is None and "settled" in record["stopped_early"]
    assert record["usage"] == result.spend.usage.model_dump() and record["latency_s"] >= 0


@pytest.mark.parametrize("reply, route", [
    ({"route": "direct", "confidence": 0.9, "reason": "arithmetic in the task", "answer": "4"}, "direct"),
    ({"route": "refuse", "confidence": 0.95, "reason": "phishing", "answer": "I can't help with that."}, "refuse"),
    ({"route": "plan", "confidence": 0.4, "reason": "unsure what to look up", "answer": None}, "clarify"),
])
def test_any_other_route_is_read_whole(reply: dict[str, object], route: str) -> None:
    llm = CountingStream(json.dumps(reply))
    decision = _route(llm).value
    assert decision.route == route and decision.reason != STOPPED_REASON
    assert not llm.closed_early and "".join(llm.read) == json.dumps(reply)


def test_a_reply_sent_whole_keeps_its_reason() -> None:
    llm = FunctionLLM(lambda request: PLAN, profile=json_router())  # one chunk: the whole reply
    assert _route(llm).value.reason == "two figures to look up and subtract"


def test_off_by_default_and_on_for_the_embedded_model() -> None:
    llm = CountingStream(PLAN, stop=False)
    assert _route(llm).value.reason == "two figures to look up and subtract"
    assert llm.completes == 1 and not llm.read
    assert not HOSTED.stop_at_plan and not ModelProfile().stop_at_plan
    assert SMALL_LOCAL.stop_at_plan and SMALL_LOCAL.reply_form("router") == "json"
