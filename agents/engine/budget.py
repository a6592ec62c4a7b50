"""Token, call and money caps of one run, as pure checks over what was spent (the task engine and the ReAct
baseline share them).

Example:
    >>> from agents.llm.base import Usage
    >>> budget = Budget(token_budget=100, max_llm_calls=3)
    >>> budget.check(Usage(llm_calls=1, input_tokens=40, output_tokens=10))  # fine: nothing raised
    >>> budget.check(Usage(llm_calls=3, input_tokens=40), before_call=True)
    Traceback (most recent call last):
    ...
    agents.errors.BudgetExceeded: the task used 3 LLM calls, over its max_llm_calls of 3; raise RuntimeConfig.max_llm_calls or split the task
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.config import RuntimeConfig
from agents.config.prices import CostBudget, PriceTable
from agents.errors import BudgetExceeded, CostBudgetExceeded, UnpricedModelError
from agents.llm.base import Spend, Usage
from agents.results import UsageReport

__all__ = ["Budget", "BudgetExceeded"]


@dataclass(frozen=True, slots=True)
class Budget:
    """``None`` disables a cap. ``prices`` turns calls into dollars; ``max_cost_usd`` caps them (its check
    before each model call runs where the prompt is known, in the role's process:
    ``agents.roles.cost_meter``)."""

    token_budget: int | None
    max_llm_calls: int | None
    prices: PriceTable | None = None
    max_cost_usd: float | None = None

    @classmethod
    def of(cls, config: RuntimeConfig) -> Budget:
        return cls(config.token_budget, config.max_llm_calls, config.prices, config.max_cost_usd)

    def check(self, spent: Usage, *, before_call: bool = False) -> None:
        """Raise ``BudgetExceeded`` when ``spent`` is over a cap — or, ``before_call``, when the next call would
        start at or past it (a run must not start a call it cannot afford)."""
        tokens = spent.total_tokens
        if self.token_budget is not None and (tokens > self.token_budget or
                                              (before_call and tokens >= self.token_budget)):
            raise BudgetExceeded("token_budget", tokens, self.token_budget)
        calls = spent.llm_calls
        if self.max_llm_calls is not None and (calls > self.max_llm_calls or
                                               (before_call and calls >= self.max_llm_calls)):
            raise BudgetExceeded("max_llm_calls", calls, self.max_llm_calls)

    def affords(self, spent: Usage, calls: int) -> bool:
        """Whether ``calls`` more calls can start from ``spent`` (tokens under the budget, calls within the cap):
        a speculative call is started only if the sequential run would have started it too."""
        if self.token_budget is not None and spent.total_tokens >= self.token_budget:
            return False
        return self.max_llm_calls is None or spent.llm_calls + calls <= self.max_llm_calls

    def cost(self, spend: Spend) -> float | None:
        """What ``spend``'s calls cost (from their records, as the live view computes it); None without
        prices."""
        return None if self.prices is None else self.prices.records_cost(spend.calls)

    def check_priced(self, spend: Spend) -> None:
        """With a money cap, a call of a model the table does not price stops the task (after it is booked):
        its cost is unknown, so the cap could no longer be held."""
        if self.max_cost_usd is not None and self.prices is not None:
            model = self.prices.unpriced(spend.calls)
            if model is not None:
                raise UnpricedModelError(model)

    def for_call(self, spent: UsageReport) -> CostBudget | None:
        """What a role call carries to check each of its model calls (None without a money cap). Raises
        ``CostBudgetExceeded`` when no call can fit any more (spent over the cap: any call adds to it)."""
        if self.max_cost_usd is None or self.prices is None:
            return None
        if spent.cost_usd is None:
            if spent.total.llm_calls:  # an earlier run's calls were not priced (resumed under new prices)
                raise UnpricedModelError("")
            return CostBudget(self.prices, self.max_cost_usd, 0.0)
        if spent.cost_usd > self.max_cost_usd:
            raise CostBudgetExceeded("", "", 0, None, spent.cost_usd, self.max_cost_usd)
        return CostBudget(self.prices, self.max_cost_usd, spent.cost_usd)
