"""Each tool's own arguments in the JSON plan's schema: one step form per tool, so a grammar-constrained server
decodes ``tool_input`` against that tool's parameters (names, required ones, types, enums, patterns).

This is the native function-calling guarantee for a plan: a model cannot write an argument the tool does not
take, leave out a required one, or put a word where the tool declares a number or a pattern. It is sound for any
task: the schema says only what the tool's own parameter schema says, widened where the plan may put a
``$step_N_result`` reference instead of a value. Validation still checks every plan (servers without constrained
decoding ignore the schema).

A parameter schema outside the subset grammar converters handle (``$ref``, ``allOf``, ``not``, conditionals,
patterns without anchors) keeps a plain object for that tool: its plans are validated as before.

    >>> forms = step_forms({"lookup": {"type": "object", "properties": {"city": {"type": "string"}},
    ...                                "required": ["city"]}})
    >>> [form["properties"]["tool_name"] for form in forms]
    [{'type': 'null'}, {'const': 'lookup'}, {'const': 'lookup'}]
    >>> forms[1]["properties"]["tool_input"]["required"]
    ['city']
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dag.refs import WHOLE_REF_PATTERN
from planning.models import PlanStep

__all__ = ["grammar_safe", "step_forms", "tool_input_schema"]

_WHOLE_REF = {"type": "string", "pattern": WHOLE_REF_PATTERN}

# Keys a JSON-Schema-to-grammar converter reads or can safely ignore; anything else (``$ref``, ``allOf``, ``not``,
# ``if``, ``dependentSchemas``...) it may mistranslate, so such a tool keeps the unconstrained object.
_SAFE_KEYS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "oneOf",
    "pattern", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "description", "default", "examples", "title", "format", "nullable", "uniqueItems",
})
_SCHEMA_LISTS = ("anyOf", "oneOf")
_ESCAPES = frozenset("[](){}|*+?")
_CLASS_ESCAPES = frozenset("[]")
# The formats llama.cpp's converter knows; any other would be decoded as a plain string while the tool expects it.
_FORMATS = frozenset({"date", "time", "date-time", "uuid"})


def step_forms(tool_schemas: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The step's alternatives: a reasoning step, then each tool with and without a description.

    Every key of a form is required except ``depends_on`` (and a reasoning step's empty ``tool_input``): grammar
    converters emit required keys first, so this keeps the order the prompts show (``description`` before the
    tool, ``depends_on`` last)."""
    forms = [_reasoning_form()]
    for name in sorted(tool_schemas):
        tool_input = tool_input_schema(tool_schemas[name])
        forms.append(_tool_form(name, tool_input, described=True))
        forms.append(_tool_form(name, tool_input, described=False))
    return forms


def tool_input_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``tool_input``'s schema for a tool with these parameters: the parameters with each constrained value also
    accepting a whole ``$step_N_result`` reference; a plain object when the schema is outside the safe subset.

        >>> n = tool_input_schema({"type": "object", "properties": {"n": {"type": "integer"}}})["properties"]["n"]
        >>> [branch["type"] for branch in n["anyOf"]]
        ['integer', 'string']
    """
    props = parameters.get("properties")
    if not isinstance(props, Mapping) or not grammar_safe(parameters):
        return {"type": "object"}
    required = [name for name in parameters.get("required", []) or [] if name in props]
    return {"type": "object", "properties": {name: _widened(prop) for name, prop in props.items()},
            "required": required, "additionalProperties": parameters.get("additionalProperties") is True}


def grammar_safe(schema: Any) -> bool:
    """Whether every node of ``schema`` uses only keys a grammar converter translates faithfully."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping) or not set(schema) <= _SAFE_KEYS:
        return False
    pattern = schema.get("pattern")
    if pattern is not None and not _convertible(pattern):
        return False
    if "format" in schema and schema["format"] not in _FORMATS:
        return False
    children: list[Any] = list((schema.get("properties") or {}).values())
    for key in _SCHEMA_LISTS:
        children.extend(schema.get(key) or [])
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            children.append(schema[key])
    return all(grammar_safe(child) for child in children)


def _convertible(pattern: Any) -> bool:
    """An anchored pattern whose escapes llama.cpp's converter keeps valid. It copies any other escape (``\\d``,
    ``\\.``, ``\\$``, and inside a class anything but ``\\[`` and ``\\]``) into the grammar as is, and the grammar's
    parser refuses it, failing the whole request."""
    if not (isinstance(pattern, str) and pattern.startswith("^") and pattern.endswith("$")):
        return False
    in_class, i = False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1:i + 2]
            if escaped not in (_CLASS_ESCAPES if in_class else _ESCAPES):
                return False
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        i += 1
    return True


def _widened(prop: Mapping[str, Any]) -> dict[str, Any]:
    """``prop`` or a whole reference, wherever ``prop`` constrains the value; free text already takes references
    inline ("size of {$step_1_result}"), so it stays as it is."""
    node = _inside_widened(prop)
    return node if _free_text(node) else {"anyOf": [node, dict(_WHOLE_REF)]}


def _inside_widened(prop: Mapping[str, Any]) -> dict[str, Any]:
    """``prop`` with its nested values widened (a list may hold references); the branches of a union are one
    value position, widened once around the union."""
    node = {key: value for key, value in prop.items() if key not in ("description", "examples", "title")}
    if isinstance(node.get("properties"), Mapping):
        node["properties"] = {name: _widened(child) for name, child in node["properties"].items()}
    if isinstance(node.get("items"), Mapping):
        node["items"] = _widened(node["items"])
    for key in _SCHEMA_LISTS:
        if key in node:
            node[key] = [_inside_widened(branch) if isinstance(branch, Mapping) else branch for branch in node[key]]
    return node


def _free_text(node: Mapping[str, Any]) -> bool:
    constraints = ("enum", "const", "pattern", "format", "anyOf", "oneOf")
    return node.get("type") == "string" and not any(key in node for key in constraints)


@functools.cache
def _step_fields() -> dict[str, dict[str, Any]]:
    """The wire step's own field schemas (``PlanStep``), so the forms constrain what the wire model says."""
    return {name: {key: value for key, value in prop.items() if key not in ("title", "default")}
            for name, prop in PlanStep.model_json_schema()["properties"].items()}


def _tool_form(name: str, tool_input: dict[str, Any], *, described: bool) -> dict[str, Any]:
    fields = _step_fields()
    props: dict[str, Any] = {"step_id": dict(fields["step_id"])}
    if described:
        props["description"] = dict(fields["description"])
    props |= {"tool_name": {"const": name}, "tool_input": tool_input, "depends_on": dict(fields["depends_on"])}
    return {"type": "object", "properties": props, "required": [key for key in props if key != "depends_on"],
            "additionalProperties": False}


def _reasoning_form() -> dict[str, Any]:
    fields = _step_fields()
    props = {"step_id": dict(fields["step_id"]), "description": {**fields["description"], "minLength": 1},
             "tool_name": {"type": "null"},
             "tool_input": {"type": "object", "properties": {}, "additionalProperties": False},
             "depends_on": dict(fields["depends_on"])}
    return {"type": "object", "properties": props, "required": ["step_id", "description", "tool_name"],
            "additionalProperties": False}
