"""Tool outputs become JSON values of bounded size before they reach a prompt, an event or the store."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import uuid
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import pydantic

__all__ = ["TRUNCATION_MARKER", "UnserializableOutputError", "serialize_output", "truncate_output"]

TRUNCATION_MARKER = "\n…[output truncated by tetrarch: showing {shown} of {total} tokens]"
_HUGE_MARKER = "\n…[output truncated by tetrarch: showing {shown} tokens of {chars} characters]"
_CHARS_PER_TOKEN_BOUND = 16
_MIN_COUNTED_CHARS = 200_000
"""Counting tokens is linear but slow (a 50 MB output took over 10 s, blocking the executor past its step
timeout): a longer text is cut to a prefix of max(16 characters per shown token, 200,000 characters) before it is
encoded. Real tokens average ≈4 characters, so the prefix holds the tokens that are shown; the marker then gives
the total in characters (counting all the tokens is the cost avoided)."""


# Values whose ``str`` is their data (a date, an amount, an id); any other object's ``str`` is only its repr.
_TEXT_VALUES = (datetime.date, datetime.time, datetime.timedelta, decimal.Decimal, uuid.UUID, PurePath)


class UnserializableOutputError(TypeError):
    """A tool returned an object that is not data (a socket, a file, a client): its repr would be stored as the
    step's output and the step marked completed. The dispatcher turns it into a permanent tool error."""

    def __init__(self, type_name: str) -> None:
        super().__init__(f"returned a {type_name}, which is not data; return a str, number, bool, None, list, dict, "
                         "pydantic model or dataclass")
        self.type_name = type_name


def serialize_output(value: Any) -> Any:
    """A JSON-able copy of a tool's return value (pydantic models, dataclasses, sets, enums, paths, dates,
    decimals, UUIDs). Raises ``UnserializableOutputError`` for anything else (a socket, a file handle).

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
    if isinstance(value, _TEXT_VALUES):
        return str(value)
    raise UnserializableOutputError(type(value).__qualname__)


def truncate_output(value: Any, max_tokens: int, *, encoding: str = "o200k_base") -> tuple[Any, bool]:
    """``(value, False)`` when it fits in ``max_tokens``; otherwise its text cut to the limit with a
    visible marker, and True. The marker tells the model (and the user) that data is missing."""
    from prompts import count_tokens, get_encoding

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    bound = max(max_tokens * _CHARS_PER_TOKEN_BOUND, _MIN_COUNTED_CHARS)
    if len(text) > bound:
        enc = get_encoding(encoding)
        head = enc.decode(enc.encode(text[:bound], disallowed_special=())[:max(0, max_tokens)])
        return head + _HUGE_MARKER.format(shown=max(0, max_tokens), chars=len(text)), True
    total = count_tokens(text, encoding)
    if total <= max_tokens:
        return value, False
    enc = get_encoding(encoding)
    shown = max(0, max_tokens)
    head = enc.decode(enc.encode(text, disallowed_special=())[:shown])
    return head + TRUNCATION_MARKER.format(shown=shown, total=total), True
