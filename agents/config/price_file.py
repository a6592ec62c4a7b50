"""A price table read from its JSON file (``RuntimeConfig(prices="prices.json")``, ``tetrarch ui --prices
FILE``): the one place the table's format meets the disk; the arithmetic is ``agents.config.prices``.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "prices.json"
    >>> _ = path.write_text(json.dumps({"gpt-4.1-mini": [0.40, 1.60], "*": [0, 0]}))
    >>> load_prices(path).price("anything")
    (0.0, 0.0)
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from agents.config.prices import PriceTable, price_table
from agents.errors import ConfigError

__all__ = ["load_prices"]

_FORMAT = '{"gpt-4.1-mini": [0.40, 1.60]} (USD per million input and output tokens; "*" for any other model)'


def load_prices(path: str | Path) -> PriceTable:
    """The price table in ``path``, or a ``ConfigError`` that says what is wrong with the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the price table {str(path)!r}: {exc}; it must be a JSON object such "
                          f"as {_FORMAT}") from None
    try:
        return price_table(data)
    except (ValidationError, ValueError) as exc:
        msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ConfigError(f"the price table {str(path)!r} must map each model name to [input, output] USD "
                          f"per million tokens: {msg}") from None
