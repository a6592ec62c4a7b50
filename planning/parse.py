"""Read a role's JSON out of what real models emit: code fences, prose around the object, trailing
commas, Python literals. Tolerant about form, strict about meaning: the result is always a validated
wire model, and every failure is one ``LLMOutputError`` whose message is written for the repair round.

    >>> parse_router_decision('Sure! ```json\\n{"route": "direct", "confidence": 0.9, "answer": "4",}\\n```').answer
    '4'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeVar

import pydantic

from planning.errors import LLMOutputError
from planning.models import Plan, Reflection, RouterDecision

__all__ = [
    "describe_validation_error",
    "drop_titles",
    "extract_json_object",
    "inline_refs",
    "json_schema_for",
    "loads_lenient",
    "normalise_step",
    "parse_model",
    "parse_plan",
    "parse_reflection",
    "parse_router_decision",
    "plan_schema",
    "reflection_schema",
]

M = TypeVar("M", bound=pydantic.BaseModel)

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


def _strip_trailing_commas(text: str) -> str:
    out: list[str] = []
    in_str = esc = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _python_literals(text: str) -> str:
    # Small models trained on Python sometimes write True/False/None; fix them outside strings only.
    out: list[str] = []
    in_str = esc = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            i += 1
            continue
        if c == '"':
            in_str = True
            out.append(c)
            i += 1
            continue
        for word, repl in (("True", "true"), ("False", "false"), ("None", "null")):
            if text.startswith(word, i) and not (i and text[i - 1].isalnum()) and \
                    not text[i + len(word):i + len(word) + 1].isalnum():
                out.append(repl)
                i += len(word)
                break
        else:
            out.append(c)
            i += 1
    return "".join(out)


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


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` that parses, after fences/prose/trailing commas are dealt with.

    >>> extract_json_object('Here you go:\\n```json\\n{"a": [1, 2,],}\\n```\\nDone.')
    {'a': [1, 2]}
    """
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


def parse_model(text: str, model_cls: type[M]) -> M:
    """Extract the JSON object and validate it as ``model_cls``; errors become LLMOutputError."""
    if model_cls is Plan:
        return parse_plan(text)  # type: ignore[return-value]
    data = extract_json_object(text)
    try:
        return model_cls.model_validate(data)
    except pydantic.ValidationError as exc:
        raise LLMOutputError(f"Your JSON does not match the required format: {describe_validation_error(exc)}. "
                             "Return only one JSON object with the required fields.", raw=text) from None


def parse_router_decision(text: str) -> RouterDecision:
    return parse_model(text, RouterDecision)


def parse_reflection(text: str) -> Reflection:
    return parse_model(text, Reflection)


def parse_plan(text: str) -> Plan:
    """A whole plan; the same code path as streaming (``StreamingPlanParser``), so a plan parses to the
    same steps whether it arrived in one piece or in chunks. A bare array of steps is accepted."""
    from planning.stream import StreamingPlanParser

    parser = StreamingPlanParser()
    steps = parser.feed(text)
    steps += parser.close()
    return Plan(steps=steps)


def json_schema_for(model_cls: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The wire model's JSON Schema for constrained decoding: ``$ref``s inlined, titles dropped."""
    return drop_titles(inline_refs(model_cls.model_json_schema()))


def plan_schema(tool_names: Iterable[str]) -> dict[str, Any]:
    """The plan schema with ``tool_name`` limited to the registered tools (or null for a reasoning step).

    Grammar-constrained servers then cannot emit a tool that does not exist: the prompt regression set
    measured qwen2.5-coder-1.5b copying the prompt example's tool name in 13 of 15 invalid plans (8/23 valid);
    with the names enumerated, 22/23 were valid. Validation still checks everything (servers without
    constrained decoding ignore the schema)."""
    schema = json_schema_for(Plan)
    names = sorted(set(tool_names))
    if names:
        step = schema["properties"]["steps"]["items"]
        step["properties"]["tool_name"] = {"anyOf": [{"enum": names, "type": "string"}, {"type": "null"}],
                                           "default": None}
    return schema


def reflection_schema() -> dict[str, Any]:
    """The reflection schema with each score an explicit enum 1-5: llama.cpp's grammar builder ignores
    integer ``minimum``/``maximum`` (llama-cpp-python 0.3.36), and the 1.5B model wrote ``correctness: 0``."""
    schema = json_schema_for(Reflection)
    for score in schema["properties"]["scores"]["properties"].values():
        score.pop("minimum", None)
        score.pop("maximum", None)
        score["enum"] = [1, 2, 3, 4, 5]
    return schema


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace ``{"$ref": "#/$defs/X"}`` with the definition. Small models and some servers' grammar
    builders handle flat schemas better. Recursive definitions keep their ``$defs``."""
    defs = schema.get("$defs", {})

    class _Recursive(Exception):
        pass

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                key = ref.removeprefix("#/$defs/")
                if key in seen or key not in defs:
                    raise _Recursive
                return {**resolve(defs[key], seen | {key}), **{k: v for k, v in node.items() if k != "$ref"}}
            return {k: resolve(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        return node

    try:
        return resolve(schema, frozenset())
    except _Recursive:
        return schema


def drop_titles(node: Any, *, in_properties: bool = False) -> Any:
    """Remove pydantic's ``title`` noise — except where ``title`` is the NAME of a property."""
    if isinstance(node, dict):
        return {k: drop_titles(v, in_properties=(k == "properties" and not in_properties))
                for k, v in node.items() if in_properties or k != "title"}
    if isinstance(node, list):
        return [drop_titles(v) for v in node]
    return node
