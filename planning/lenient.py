"""Lenient JSON reading shared by the whole-reply parsers (``planning.parse``) and the streaming plan parser
(``planning.stream``): code fences, prose around the object, trailing commas, Python literals.

It sits below both so that neither imports the other's module to reach these helpers (that was a
``parse`` <-> ``stream`` import cycle).

    >>> loads_lenient('{"a": [1, 2,], "b": True}')
    {'a': [1, 2], 'b': True}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pydantic

from planning.errors import LLMOutputError

__all__ = [
    "describe_validation_error",
    "extract_json_object",
    "loads_lenient",
    "normalise_step",
]

_MAX_CANDIDATES = 32
_MAX_ERRORS = 6
_NULL_WORDS = frozenset({"", "null", "none", "nil", "n/a"})


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the container opened at ``start``, string-aware; None if it never closes."""
    stack: list[str] = []
    in_str = esc = False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return i + 1
    return None


def _segments(text: str) -> Iterator[tuple[bool, str]]:
    """``text`` as (inside a JSON string?, piece) pieces, in order; a string piece keeps its quotes and escapes
    (an unterminated string runs to the end). The repairs below touch only what lies outside strings."""
    start = i = 0
    n = len(text)
    while i < n:
        if text[i] != '"':
            i += 1
            continue
        if i > start:
            yield False, text[start:i]
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        end = min(j + 1, n)
        yield True, text[i:end]
        start = i = end
    if start < n:
        yield False, text[start:]


_TRAILING_COMMA = re.compile(r",([ \t\r\n]*[}\]])")
# Small models trained on Python sometimes write True/False/None; [^\W_] is str.isalnum's class.
_PYTHON_LITERAL = re.compile(r"(?<![^\W_])(True|False|None)(?![^\W_])")
_JSON_LITERAL = {"True": "true", "False": "false", "None": "null"}


def _strip_trailing_commas(text: str) -> str:
    if _TRAILING_COMMA.search(text) is None:  # the usual reply: nothing to strip, so no need to split it
        return text
    return "".join(piece if quoted else _TRAILING_COMMA.sub(r"\1", piece) for quoted, piece in _segments(text))


def _python_literals(text: str) -> str:
    return "".join(piece if quoted else _PYTHON_LITERAL.sub(lambda m: _JSON_LITERAL[m.group(1)], piece)
                   for quoted, piece in _segments(text))


def loads_lenient(text: str) -> Any:
    """``json.loads`` after removing trailing commas; then once more with Python literals fixed.
    Raises ``json.JSONDecodeError`` from the first attempt when both fail."""
    cleaned = _strip_trailing_commas(text)
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError as first:
        try:
            return json.loads(_python_literals(cleaned))
        except json.JSONDecodeError:
            raise first from None


def _candidates(text: str, openers: str) -> list[int]:
    starts = [i for i, c in enumerate(text) if c in openers]
    # Code fences first: the object inside ```json … ``` is what the model meant, prose braces are not.
    fence = text.find("```")
    if fence != -1:
        starts.sort(key=lambda i: 0 if i > fence else 1)
    return starts[:_MAX_CANDIDATES]


def _extract(text: str, openers: str) -> Any:
    if not isinstance(text, str):
        raise LLMOutputError(f"expected text, got {type(text).__name__}", raw=str(text))
    starts = _candidates(text, openers)
    if not starts:
        raise LLMOutputError("Your output contained no JSON object. Return only one JSON object.", raw=text)
    first_error: str | None = None
    for start in starts:
        end = _balanced_end(text, start)
        if end is None:
            first_error = first_error or ("Your output ended before the JSON object was closed (it was truncated "
                                          "or has unbalanced brackets). Return only one complete JSON object.")
            continue
        try:
            return loads_lenient(text[start:end])
        except json.JSONDecodeError as exc:
            first_error = first_error or f"Your output was not valid JSON: {exc}. Return only one JSON object."
        except RecursionError:
            first_error = first_error or "Your output nests JSON too deeply. Return only one flat JSON object."
    raise LLMOutputError(first_error or "Your output contained no JSON object.", raw=text)


def _whole_object(text: Any) -> dict[str, Any] | None:
    """The usual reply, a JSON object and nothing else, read at C speed; None for anything else. What
    ``_extract`` finds then: its first candidate is the object's own "{" (no fence reorders them), whose
    balanced end is the text's end, and valid JSON has no trailing comma outside a string to strip."""
    if not isinstance(text, str) or "```" in text:
        return None
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` that parses, after fences/prose/trailing commas are dealt with.

    >>> extract_json_object('Here you go:\\n```json\\n{"a": [1, 2,],}\\n```\\nDone.')
    {'a': [1, 2]}
    """
    value = _whole_object(text)
    if value is None:
        value = _extract(text, "{")
    if not isinstance(value, dict):  # pragma: no cover - "{" always opens an object
        raise LLMOutputError("Return only one JSON object.", raw=text)
    return value


def describe_validation_error(exc: pydantic.ValidationError, prefix: str = "") -> str:
    """Compact field-by-field errors, e.g. ``steps.0.depends_on: Input should be a valid list``."""
    lines = []
    errors = exc.errors(include_url=False)
    for err in errors[:_MAX_ERRORS]:
        loc = ".".join(str(p) for p in (*([prefix] if prefix else []), *err["loc"])) or "(root)"
        lines.append(f"{loc}: {err['msg']}")
    if len(errors) > _MAX_ERRORS:
        lines.append(f"... and {len(errors) - _MAX_ERRORS} more")
    return "; ".join(lines)


def normalise_step(data: Any) -> Any:
    """Models write ``"tool_name": "null"`` or ``"none"`` for a reasoning step; that means None."""
    if isinstance(data, dict) and isinstance(data.get("tool_name"), str) and \
            data["tool_name"].strip().lower() in _NULL_WORDS:
        return {**data, "tool_name": None}
    return data
