"""JSON Schema for a tool's parameters, from its type hints and its Google-style docstring.

The LLM chooses a tool and fills its arguments from this schema alone, so a function the schema cannot
describe is rejected at decoration time (``ToolDefinitionError``), never at call time.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pydantic

from agents.tools.errors import ToolDefinitionError
from planning.parse import drop_titles, inline_refs

__all__ = ["Docstring", "ParameterModel", "build_parameter_model", "parameters_schema", "parse_docstring", "return_kind"]

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Yields|Raises|Examples?|Notes?|Attributes)\s*:\s*$")
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Docstring:
    summary: str
    params: Mapping[str, str]
    returns: str = ""
    """The ``Returns:`` section in one line ("" when absent)."""


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google-style docstring into its description and its ``Args:`` entries.

    >>> d = parse_docstring("Find a city.\\n\\nArgs:\\n    city (str): English name.\\n        Case-insensitive.")
    >>> d.summary, d.params["city"]
    ('Find a city.', 'English name. Case-insensitive.')
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    returns: list[str] = []
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header and (len(line) - len(line.lstrip())) == 0:
            section, current, arg_indent = header.group(1), None, None
            continue
        if section is None:
            summary.append(stripped)
            continue
        if section in ("Returns", "Return") and stripped:
            returns.append(stripped)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        match = _ARG.match(stripped)
        if match and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = match.group(1).lstrip("*")
            params[current] = match.group(3).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    text = " ".join(_paragraphs(summary))
    return Docstring(summary=text.strip(), params=params, returns=" ".join(returns))


def _paragraphs(lines: list[str]) -> list[str]:
    # The description sent to the LLM is the docstring's prose before the first section, joined into
    # one line per paragraph: prompt tokens are precious and hard-wrapped lines add nothing.
    out: list[str] = []
    buf: list[str] = []
    for line in [*lines, ""]:
        if line:
            buf.append(line)
        elif buf:
            out.append(" ".join(buf))
            buf = []
    return out


class ParameterModel(pydantic.BaseModel):
    """Base of the generated argument models: unknown arguments are errors, not silently dropped."""

    model_config = pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False)


class _ParametersOnly:
    """The parameter annotations of a function, without its return annotation, for get_type_hints."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        inner = inspect.unwrap(fn)
        self.__annotations__ = {k: v for k, v in getattr(inner, "__annotations__", {}).items() if k != "return"}
        self.__globals__ = getattr(inner, "__globals__", {})


def parameter_hints(fn: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    """Resolved parameter annotations. The return annotation is not needed (and a string one naming a type the
    body never uses would not resolve after cloudpickle rebuilt a closure with only the globals it uses)."""
    try:
        return typing.get_type_hints(_ParametersOnly(fn), include_extras=True)
    except Exception as exc:  # NameError from a forward reference, typically
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot resolve its type hints ({exc}); use types importable "
                                  "at module level", tool_name=tool_name) from exc


def build_parameter_model(fn: Callable[..., Any], tool_name: str, docs: Docstring,
                          hints: dict[str, Any] | None = None,
                          exclude: frozenset[str] = frozenset()) -> type[ParameterModel]:
    """A pydantic model with one field per parameter of ``fn`` (but ``exclude``: filled by the runtime); raises ToolDefinitionError for what an LLM
    cannot fill in (``*args``, ``**kwargs``, missing or unsupported annotations). ``hints`` are the
    already resolved parameter types (a Tool carries them across pickling)."""
    signature = inspect.signature(fn)
    if hints is None:
        hints = parameter_hints(fn, tool_name)
    fields: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name in exclude:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool {tool_name!r}: parameter {param}: *args/**kwargs cannot be described "
                                      "to an LLM; declare each argument with a type", tool_name=tool_name)
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"tool {tool_name!r}: parameter {name!r} is positional-only; tools are "
                                      "called with keyword arguments", tool_name=tool_name)
        if name not in hints:
            raise ToolDefinitionError(f"tool {tool_name!r}: parameter {name!r} has no type annotation; add one "
                                      "(the JSON Schema the LLM sees is built from it)", tool_name=tool_name)
        annotation = hints[name]
        _check_supported(annotation, tool_name, name)
        default = ... if param.default is param.empty else _checked_default(annotation, param.default, tool_name, name)
        fields[name] = (annotation, pydantic.Field(default, description=docs.params.get(name) or None))
    model_name = "".join(part.title() for part in re.split(r"\W+", tool_name) if part) + "Arguments"
    try:
        return pydantic.create_model(model_name, __base__=ParameterModel, **fields)
    except (pydantic.PydanticSchemaGenerationError, TypeError) as exc:
        raise ToolDefinitionError(f"tool {tool_name!r}: {exc}", tool_name=tool_name) from exc


def _checked_default(annotation: Any, default: Any, tool_name: str, param: str) -> Any:
    """A default the type hint rejects (``x: int = "all"``, ``s: str = None``) would reach the tool unchecked
    whenever the LLM leaves the argument out: reject it when the tool is declared."""
    try:
        pydantic.TypeAdapter(annotation).validate_python(default)
    except pydantic.ValidationError as exc:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: parameter {param!r} defaults to {default!r}, which is not a {_type_name(annotation)} "
            f"({exc.errors(include_url=False)[0]['msg']}); fix the default or widen the type hint "
            f"(e.g. {_type_name(annotation)} | None)", tool_name=tool_name) from None
    return default


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _check_supported(annotation: Any, tool_name: str, param: str) -> None:
    try:
        pydantic.TypeAdapter(annotation).json_schema()
    except Exception as exc:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: parameter {param!r} has type {annotation!r}, which has no JSON Schema; use str, "
            f"int, float, bool, list/dict/tuple of those, Literal, Enum, a TypedDict or a pydantic model "
            f"({str(exc).splitlines()[0]})", tool_name=tool_name) from exc


def parameters_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema as an LLM-facing ``parameters`` object: refs inlined, titles dropped,
    ``additionalProperties: false`` and ``required`` always present."""
    schema = drop_titles(inline_refs(model.model_json_schema()))
    schema.setdefault("properties", {})
    schema["required"] = list(schema.get("required", []))
    schema["additionalProperties"] = False
    schema["type"] = "object"
    return schema


def return_kind(fn: Any) -> str | None:
    """What a tool returns, in the words the plan prompts use: "number", "text", "list", "object", "boolean"
    (None when unannotated or anything else). A planner that sees ``doc_search(...) -> list`` and
    ``calculator(...) -> number`` can tell where an output does not fit the next input.

    >>> def f() -> int | float: ...
    >>> return_kind(f)
    'number'
    """
    try:
        annotation = typing.get_type_hints(fn).get("return")
    except Exception:  # noqa: BLE001 - an unresolvable annotation only costs the hint
        return None
    kinds = {_kind(arg) for arg in (typing.get_args(annotation) if _is_union(annotation) else (annotation,))
             if arg is not type(None)}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _kind(annotation: Any) -> str | None:
    base = typing.get_origin(annotation) or annotation
    if base is bool:
        return "boolean"
    if base in (int, float):
        return "number"
    if base is str:
        return "text"
    if base in (list, tuple, set, frozenset, collections.abc.Sequence):
        return "list"
    if base in (dict, collections.abc.Mapping) or (isinstance(base, type) and issubclass(base, pydantic.BaseModel)):
        return "object"
    return None
