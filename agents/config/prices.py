"""What model calls cost, from a price table the user gives (``RuntimeConfig(prices=...)``, ``tetrarch ui
--prices FILE``): tetrarch ships no prices, since they differ by provider, contract and month, and a wrong
built-in price is worse than none. Pure: no I/O (``agents.config.price_file`` reads a table from its file).

The table maps a model name (as the LLM call records name it) to its USD price per million input and output
tokens; ``"*"`` prices every model not named. A server names the model that answered with its dated snapshot
("gpt-4.1-mini-2025-04-14"): a snapshot the table does not list is priced as its undated name. A task whose
calls include a model the table does not price has no cost (unknown), rather than a partial sum that reads as
the whole.

``CostBudget`` is what one role call may spend under ``RuntimeConfig.max_cost_usd``: a call is made only if
its prompt, at its model's input price, fits beside what the task has spent.

    >>> table = PriceTable.model_validate({"prices": {"gpt-4.1-mini": [0.40, 1.60]}})
    >>> round(table.cost([("gpt-4.1-mini", 1_000_000, 500_000)]), 2)
    1.2
    >>> table.cost([("local", 10, 10)]) is None
    True
    >>> table.price("gpt-4.1-mini-2025-04-14")
    (0.4, 1.6)
    >>> CostBudget(table, max_cost_usd=0.5, spent_usd=0.1).admit("planner", "gpt-4.1-mini", 1_000_000)
    0.4
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agents.errors import CostBudgetExceeded, UnpricedModelError

__all__ = ["CostBudget", "PriceTable", "price_table", "usd"]

_PER = 1_000_000
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")
"""A dated snapshot's suffix: OpenAI's ``-2025-04-14``, Anthropic's ``-20250514``."""


def usd(amount: float) -> str:
    """An amount of dollars as messages show it: to the millionth, without trailing zeros.

    >>> usd(0.5), usd(0.000123), usd(12.0)
    ('$0.5', '$0.000123', '$12')
    """
    return "$" + f"{amount:.6f}".rstrip("0").rstrip(".")


class PriceTable(BaseModel):
    """USD per million tokens, input and output, by model name (``"*"``: any other model)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    prices: dict[str, tuple[float, float]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_negative_price(self) -> PriceTable:
        for model, pair in self.prices.items():
            if min(pair) < 0:
                raise ValueError(f"model {model!r} has a negative price {list(pair)}; give [input, output] "
                                 "USD per million tokens, each >= 0")
        return self

    def __hash__(self) -> int:
        # pydantic's frozen hash fails on the dict; a RuntimeConfig holding a table is hashed as a cache key.
        return hash(frozenset(self.prices.items()))

    def price(self, model: str) -> tuple[float, float] | None:
        """The model's (input, output) USD per million tokens; its undated name's for a dated snapshot; else
        ``"*"``'s; None when the table prices neither."""
        found = self.prices.get(model)
        if found is None and (undated := _SNAPSHOT.sub("", model)) != model:
            found = self.prices.get(undated)
        return found if found is not None else self.prices.get("*")

    def call_cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """One call's USD cost; None if its model is unpriced."""
        price = self.price(model)
        if price is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / _PER

    def cost(self, calls: Iterable[tuple[str, int, int]]) -> float | None:
        """The USD cost of ``(model, input_tokens, output_tokens)`` calls; None if any model is unpriced."""
        total = 0.0
        for model, tokens_in, tokens_out in calls:
            cost = self.call_cost(model, tokens_in, tokens_out)
            if cost is None:
                return None
            total += cost
        return total

    def records_cost(self, records: Iterable[Mapping[str, Any]]) -> float | None:
        """The cost of LLM call records as the event log stores them (``model``, ``usage``): what a task's
        ``result.usage.cost_usd`` and the live view's cost column are both computed with."""
        return self.cost(_record_call(r) for r in records)

    def unpriced(self, records: Iterable[Mapping[str, Any]]) -> str | None:
        """The first model among these call records that the table does not price, or None."""
        return next((model for model, _, _ in map(_record_call, records) if self.price(model) is None), None)


def _record_call(record: Mapping[str, Any]) -> tuple[str, int, int]:
    usage = record.get("usage") or {}
    return (str(record.get("model") or ""), int(usage.get("input_tokens") or 0),
            int(usage.get("output_tokens") or 0))


def price_table(value: object) -> PriceTable:
    """``RuntimeConfig.prices`` given inline: a ``PriceTable`` as is, or the file's mapping
    (``{"gpt-4.1-mini": [0.40, 1.60]}``) validated into one. (``agents.config.price_file`` reads a path.)"""
    if isinstance(value, PriceTable):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"prices must map each model name to [input, output] USD per million tokens (or "
                         f"name a JSON file of that mapping), got {type(value).__name__}")
    try:
        return PriceTable.model_validate({"prices": dict(value)})
    except ValidationError as exc:
        error = exc.errors()[0]
        msg = str(error["msg"]).removeprefix("Value error, ")
        if len(error["loc"]) < 2:
            raise ValueError(f"prices: {msg}") from None
        raise ValueError(f"prices[{error['loc'][1]!r}] must be [input, output] USD per million tokens, e.g. "
                         f"[0.40, 1.60]: {msg}") from None


@dataclass(frozen=True, slots=True)
class CostBudget:
    """What the calls of one role call may spend: the task's cap, its price table, and what the task had spent
    when the role call was sent (``agents.engine.budget.Budget.for_call``). Crosses to the role's process with
    the call (Ray), where ``agents.roles.cost_meter`` checks each model call against it."""

    prices: PriceTable
    max_cost_usd: float
    spent_usd: float

    def admit(self, role: str, model: str, prompt_tokens: int, spent_here: float = 0.0) -> float:
        """The estimated cost of a call of ``model`` with ``prompt_tokens`` (its prompt at the input price),
        if it fits: what the task had spent, plus ``spent_here`` (this role call's calls so far), plus it, at
        most the cap. Else ``CostBudgetExceeded`` (the call must not be made); ``UnpricedModelError`` when
        the table does not price ``model``, since the cap could not be checked."""
        price = self.prices.price(model)
        if price is None:
            raise UnpricedModelError(model, role)
        estimate = prompt_tokens * price[0] / _PER
        spent = self.spent_usd + spent_here
        if spent + estimate > self.max_cost_usd:
            raise CostBudgetExceeded(role, model, prompt_tokens, estimate, spent, self.max_cost_usd)
        return estimate
