"""JSON in and out of the store: everything written is made JSON-shaped, redacted, then serialised.

Example:
    >>> from agents.store.redact import Redactor
    >>> encode({"a": (1, 2)}, Redactor.build(), what="an example")
    '{"a":[1,2]}'
    >>> decode('{"a":[1,2]}')
    {'a': [1, 2]}
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from agents.store.errors import StoreSerializationError
from agents.store.redact import Redactor

__all__ = ["decode", "encode", "encode_flagged"]


def encode(value: Any, redactor: Redactor, *, what: str) -> str:
    """Compact JSON text of ``value`` with secrets redacted. ``what`` names the value in errors."""
    try:
        # pydantic's encoder knows models, dataclasses, datetimes, paths, enums, sets, bytes...
        plain = to_jsonable_python(value)
        # ensure_ascii=False keeps non-ASCII text as UTF-8, so the raw database bytes are what was written.
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
        if not redactor.needs_redaction(text):
            return text  # the common case; walking a 1,000-step checkpoint per commit made commits O(n²)
        return json.dumps(redactor.redact(plain), ensure_ascii=False, separators=(",", ":"))
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise StoreSerializationError(what, exc) from exc


def encode_flagged(value: Any, redactor: Redactor, *, what: str) -> tuple[str, bool]:
    """``encode`` that also says whether anything was redacted (the caller then re-reads the redacted value)."""
    try:
        text = json.dumps(to_jsonable_python(value), ensure_ascii=False, separators=(",", ":"))
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise StoreSerializationError(what, exc) from exc
    if not redactor.needs_redaction(text):
        return text, False
    redacted = encode(value, redactor, what=what)
    return redacted, redacted != text


def decode(text: str) -> Any:
    return json.loads(text)
