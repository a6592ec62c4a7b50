"""Every model call of a role call checked against the task's money budget before it is sent.

The engine cannot do this check: it never sees a prompt. Each role call (``route``, ``plan``, ``reflect``, an
executor's step) carries the task's ``CostBudget`` — the price table, the cap and what the task had spent
when the call was sent — into the role's own process (a Ray actor, or this one), and the role talks to its
model through a ``MeteredLLM`` for that one role call: before each call, the prompt (counted with tiktoken as
``FunctionLLM`` bills it) at the model's input price, beside the task's spend and this role call's earlier
calls (repair rounds, the router's follow-up question, an executor's figure reading then argument repair),
must fit under the cap, or the call is not made (``CostBudgetExceeded``, carrying what the role call's
earlier calls cost).

Example:
    >>> from agents.config.prices import CostBudget, PriceTable
    >>> from agents.llm import FunctionLLM
    >>> budget = CostBudget(PriceTable(prices={"m": (1.0, 4.0)}), max_cost_usd=0.001, spent_usd=0.0)
    >>> llm = metered(FunctionLLM(lambda r: "ok", model="m"), budget)
    >>> llm.spent_usd
    0.0
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from agents.config.prices import CostBudget
from agents.errors import CostBudgetExceeded, UnpricedModelError
from agents.llm._tool_calls import request_tokens
from agents.llm.base import LLM, LLMReply, LLMRequest, Spend
from agents.llm.profile import profile_of
from agents.roles.json_call import abandoned_spend, reply_record

__all__ = ["MeteredLLM", "metered", "model_name"]


def model_name(llm: Any) -> str:
    """The model a backend sends its calls to (``OpenAIChat.model``, ``FunctionLLM(model=...)``), looking
    through wrappers (``.inner``); "" when it names none."""
    for _ in range(8):  # wrappers of wrappers, never a cycle
        name = getattr(llm, "model", None)
        if isinstance(name, str):
            return name
        llm = getattr(llm, "inner", None)
        if llm is None:
            break
    return ""


class MeteredLLM:
    """``inner`` for one role call under ``budget``: refuses a call that would pass the cap, counts what each
    call made cost (the reply's model at its price; a stream closed early, its prompt and what it wrote)."""

    def __init__(self, inner: LLM, budget: CostBudget) -> None:
        self.inner = inner
        self.profile = profile_of(inner)
        self.model = model_name(inner)
        self._budget = budget
        self.spent_usd = 0.0
        self.spend = Spend()
        """The calls this role call made, as the roles record them: what a refusal carries to the engine."""
        self._unpriced: str | None = None

    @property
    def cost_usd(self) -> float | None:
        """What the calls made through this meter cost; None once one came from a model the table does not
        price."""
        return None if self._unpriced is not None else self.spent_usd

    def _admit(self, request: LLMRequest) -> int:
        if self._unpriced is not None:  # an earlier reply came from a model the table does not price
            raise UnpricedModelError(self._unpriced, request.role).with_spend(self.spend)
        tokens = request_tokens(request)
        try:
            self._budget.admit(request.role, self.model, tokens, self.spent_usd)
        except CostBudgetExceeded as exc:
            raise exc.with_spend(self.spend) from None
        return tokens

    def _count(self, spend: Spend) -> None:
        self.spend = self.spend + spend
        for record in spend.calls:
            model = str(record.get("model") or "") or self.model
            usage = record.get("usage") or {}
            cost = self._budget.prices.call_cost(model, int(usage.get("input_tokens") or 0),
                                                 int(usage.get("output_tokens") or 0))
            if cost is None:
                self._unpriced = model
            else:
                self.spent_usd += cost

    async def complete(self, request: LLMRequest) -> LLMReply:
        self._admit(request)
        reply = await self.inner.complete(request)
        self._count(Spend(reply.usage, (reply_record(request.role, request.messages, reply),)))
        return reply

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        self._admit(request)
        started, parts, counted = time.monotonic(), list[str](), False
        try:
            async with contextlib.aclosing(self.inner.stream(request)) as items:
                async for item in items:
                    if isinstance(item, LLMReply):
                        counted = True
                        self._count(Spend(item.usage, (reply_record(request.role, request.messages, item),)))
                    else:
                        parts.append(item)
                    yield item
        finally:
            if not counted:  # closed early or cut: no usage came, so count what was sent and written
                text = "".join(parts)
                self._count(abandoned_spend(request.role, request.messages, text, "abandoned",
                                            latency_s=time.monotonic() - started))

    def __repr__(self) -> str:
        return f"MeteredLLM({self.inner!r})"


def metered(llm: LLM, budget: CostBudget | None) -> LLM:
    """The LLM one role call talks to: ``llm`` itself without a money cap, else a fresh ``MeteredLLM``."""
    return llm if budget is None else MeteredLLM(llm, budget)

