"""What a task cost, from a price table the user gives (``tetrarch ui --prices FILE``): tetrarch ships no prices,
since they differ by provider, contract and month, and a wrong built-in price is worse than none.

The file is JSON mapping a model name (as the LLM call records name it) to its USD price per million input and
output tokens; ``"*"`` prices every model not named. A task whose calls include a model the table does not price
has no cost (shown as unknown), rather than a partial sum that reads as the whole.

    >>> table = PriceTable.model_validate({"prices": {"gpt-4.1-mini": [0.40, 1.60]}})
    >>> round(table.cost([("gpt-4.1-mini", 1_000_000, 500_000)]), 2)
    1.2
    >>> table.cost([("local", 10, 10)]) is None
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.errors import ConfigError

__all__ = ["PriceTable", "load_prices"]


class PriceTable(BaseModel):
    """USD per million tokens, input and output, by model name (``"*"``: any other model)."""

    model_config = ConfigDict(frozen=True)

    prices: dict[str, tuple[float, float]] = Field(default_factory=dict)

    def price(self, model: str) -> tuple[float, float] | None:
        return self.prices.get(model, self.prices.get("*"))

    def cost(self, calls: Iterable[tuple[str, int, int]]) -> float | None:
        """The USD cost of ``(model, input_tokens, output_tokens)`` calls; None if any model is unpriced."""
        total = 0.0
        for model, tokens_in, tokens_out in calls:
            price = self.price(model)
            if price is None:
                return None
            total += (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000
        return total


def load_prices(path: str | Path) -> PriceTable:
    """The price table in ``path`` (``{"gpt-4.1-mini": [0.40, 1.60], "*": [0, 0]}``), or a ``ConfigError`` that
    says what is wrong with the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the price table {str(path)!r}: {exc}; it must be a JSON object such as "
                          '{"gpt-4.1-mini": [0.40, 1.60]} (USD per million input and output tokens)') from None
    try:
        table = PriceTable.model_validate({"prices": data})
    except ValidationError as exc:
        raise ConfigError(f"the price table {str(path)!r} must map each model name to [input, output] USD per "
                          f"million tokens: {exc.errors()[0]['msg']}") from None
    if any(p < 0 for pair in table.prices.values() for p in pair):
        raise ConfigError(f"the price table {str(path)!r} has a negative price")
    return table
