"""Tool outputs become JSON values of bounded size before they reach a prompt, an event or the store."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import pydantic

__all__ = ["TRUNCATION_MARKER", "serialize_output", "truncate_output"]

TRUNCATION_MARKER = "\n…[output truncated by tetrarch: showing {shown} of {total} tokens]"


def serialize_output(value: Any) -> Any:
    """A JSON-able copy of a tool's return value (pydantic models, dataclasses, sets, enums, paths);
    anything else becomes its ``str`` so nothing downstream fails on an exotic type.

    >>> serialize_output({"a": {1, 2}, "b": float("nan")})
    {'a': [1, 2], 'b': None}
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return serialize_output(dataclasses.asdict(value))
    if isinstance(value, enum.Enum):
        return serialize_output(value.value)
    if isinstance(value, Mapping):
        return {str(k): serialize_output(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        items = [serialize_output(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, (list, tuple)):
        return [serialize_output(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, PurePath):
        return str(value)
    return str(value)


def truncate_output(value: Any, max_tokens: int, *, encoding: str = "o200k_base") -> tuple[Any, bool]:
    """``(value, False)`` when it fits in ``max_tokens``; otherwise its text cut to the limit with a
    visible marker, and True. The marker tells the model (and the user) that data is missing."""
    from prompts import count_tokens, get_encoding

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    total = count_tokens(text, encoding)
    if total <= max_tokens:
        return value, False
    enc = get_encoding(encoding)
    shown = max(0, max_tokens)
    head = enc.decode(enc.encode(text, disallowed_special=())[:shown])
    return head + TRUNCATION_MARKER.format(shown=shown, total=total), True
