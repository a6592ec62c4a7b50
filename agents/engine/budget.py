"""Token and call caps of one run, as pure checks over what was spent (the task engine and the ReAct
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

from agents.errors import BudgetExceeded
from agents.llm.base import Usage

__all__ = ["Budget", "BudgetExceeded"]


@dataclass(frozen=True, slots=True)
class Budget:
    """``None`` disables a cap."""

    token_budget: int | None
    max_llm_calls: int | None

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
