"""Argument validation for MCP tools against the server's JSON Schema, before anything is sent.

As lenient as an ``@tool``'s pydantic validation where it is unambiguous (``"3"`` for a number, ``"true"``
for a boolean, at the top level), so a plan the planner accepted is not rejected here for less; everything
else is the JSON Schema's verdict, phrased for the LLM's one repair round.

    >>> v = compile_schema({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    >>> validate_against(v, {"properties": {"n": {"type": "integer"}}}, {"n": "3"}, "t")
    {'n': 3}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from agents.tools.errors import ToolArgumentError, ToolDefinitionError

__all__ = ["compile_schema", "validate_against"]


def compile_schema(schema: Mapping[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolDefinitionError(f"the server's input schema is not valid JSON Schema: {exc.message}") from None
    return cls(schema)


def validate_against(validator: Any, schema: Mapping[str, Any], args: dict[str, Any], tool_name: str) -> dict[str, Any]:
    props: Mapping[str, Any] = schema.get("properties") or {}
    coerced = {name: _coerce(value, props.get(name)) for name, value in args.items()}
    problems = [_phrase(err, props) for err in sorted(validator.iter_errors(coerced), key=lambda e: list(e.path))]
    if problems:
        raise ToolArgumentError(f"invalid arguments for tool {tool_name!r}: " + "; ".join(problems),
                                tool_name=tool_name)
    return coerced


def _types(prop: Any) -> list[str]:
    if not isinstance(prop, Mapping):
        return []
    kind = prop.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return [t for branch in prop.get("anyOf") or prop.get("oneOf") or [] for t in _types(branch)]


def _coerce(value: Any, prop: Any) -> Any:
    if not isinstance(value, str):
        return value
    kinds = _types(prop)
    if not kinds or "string" in kinds:
        return value
    text = value.strip()
    if "integer" in kinds and _is_int(text):
        return int(text)
    if "number" in kinds:
        try:
            return int(text) if _is_int(text) else float(text)
        except ValueError:
            pass
    if "boolean" in kinds and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _phrase(err: Any, props: Mapping[str, Any]) -> str:
    where = ".".join(str(p) for p in err.path)
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return f"missing required argument {missing!r}"
    if err.validator == "additionalProperties" and not where:
        expected = ", ".join(props) or "no arguments"
        return f"{err.message} (expected: {expected})"
    return f"argument {where!r}: {err.message}" if where else err.message
