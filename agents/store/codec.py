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

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from agents.store.errors import StoreSerializationError
from agents.store.redact import Redactor

__all__ = ["decode", "encode", "encode_flagged", "encode_model"]


def _json_text(value: Any) -> str:
    # pydantic's encoder knows models, dataclasses, datetimes, paths, enums, sets, bytes... Its Rust writer gives
    # the text to_jsonable_python + json.dumps(ensure_ascii=False, compact) gave (non-ASCII kept as UTF-8, the same
    # escapes, NaN/Infinity as Python writes them; exponents without a leading zero), at a sixth of the CPU: the
    # checkpoints, LLM call records and events of every task go through here.
    return to_json(value).decode()


def encode(value: Any, redactor: Redactor, *, what: str) -> str:
    """Compact JSON text of ``value`` with secrets redacted. ``what`` names the value in errors."""
    try:
        text = _json_text(value)
        if not redactor.needs_redaction(text):
            return text  # the common case; walking a 1,000-step checkpoint per commit made commits O(n²)
        return _json_text(redactor.redact(to_jsonable_python(value)))
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise StoreSerializationError(what, exc) from exc


def encode_flagged(value: Any, redactor: Redactor, *, what: str) -> tuple[str, bool]:
    """``encode`` that also says whether anything was redacted (the caller then re-reads the redacted value)."""
    try:
        text = _json_text(value)
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise StoreSerializationError(what, exc) from exc
    if not redactor.needs_redaction(text):
        return text, False
    redacted = encode(value, redactor, what=what)
    return redacted, redacted != text


def encode_model(model: BaseModel, redactor: Redactor, *, what: str) -> tuple[str, bool]:
    """``encode_flagged`` of ``model.model_dump(mode="json")``, without building that dict unless a secret shows."""
    try:
        text = model.model_dump_json()
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise StoreSerializationError(what, exc) from exc
    if not redactor.needs_redaction(text):
        return text, False
    return encode_flagged(model.model_dump(mode="json"), redactor, what=what)


def decode(text: str) -> Any:
    return json.loads(text)
