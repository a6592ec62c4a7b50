"""The set of tools one Orchestrator offers: lookup by name, schemas for plan validation, a catalogue
for prompts."""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from agents.tools.decorator import Permission, Tool, tool
from agents.tools.errors import ToolDefinitionError, UnknownToolError

__all__ = ["ToolRegistry", "catalog_entries", "catalog_without_examples", "catalog_params", "catalog_permissions", "catalog_summary"]


class ToolRegistry:
    """Tools by name. Plain callables are wrapped with ``@tool`` defaults (read, idempotent).

    >>> from agents.tools.decorator import tool
    >>> @tool
    ... def echo(text: str) -> str:
    ...     '''Return the text.
    ...
    ...     Args:
    ...         text: Anything.
    ...     '''
    ...     return text
    >>> ToolRegistry([echo]).names()
    ['echo']
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            made = item if isinstance(item, Tool) else tool(item)
            if made.name in self._tools:
                raise ToolDefinitionError(f"two tools are named {made.name!r}; give one of them name='...'",
                                          tool_name=made.name)
            self._tools[made.name] = made

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self._tools), n=1, cutoff=0.6)
            raise UnknownToolError(name, list(self._tools), close[0] if close else None) from None

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> dict[str, dict[str, Any]]:
        """Tool name → JSON Schema of its parameters (what ``planning.validate`` checks plans against)."""
        return {name: t.spec.parameters for name, t in self._tools.items()}

    def function_specs(self) -> list[dict[str, Any]]:
        """The tools in the OpenAI ``tools`` form (native function calling): name, description and the JSON Schema
        of the parameters, MCP tools' input schemas included; the idempotency-key parameter stays hidden."""
        specs = []
        for t in self._tools.values():
            parameters = dict(t.spec.parameters)
            if t.spec.key_param and t.spec.key_param in parameters.get("properties", {}):
                parameters["properties"] = {k: v for k, v in parameters["properties"].items() if k != t.spec.key_param}
                parameters["required"] = [r for r in parameters.get("required", []) if r != t.spec.key_param]
            specs.append({"type": "function", "function": {"name": t.name, "description": t.spec.description,
                                                           "parameters": parameters}})
        return specs

    def catalog(self) -> list[dict[str, Any]]:
        return [{"name": t.name, "description": t.spec.description, "parameters": _compact(t.spec.parameters),
                 "permission": t.spec.permission} for t in self._tools.values()]

    def catalog_text(self) -> str:
        """One line per tool, as prompts show them: ``name(arg: type, ...) -> returns [permission] — description``
        followed by the argument descriptions. Compact on purpose: every token of it is paid per call."""
        lines = []
        for t in self._tools.values():
            props = t.spec.parameters.get("properties", {})
            required = set(t.spec.parameters.get("required", []))
            sig = ", ".join(f"{n}: {_type_name(p)}" + ("" if n in required else "?") for n, p in props.items())
            flag = "" if t.spec.permission == "read" else f" [{t.spec.permission}]"
            returns = f" -> {t.spec.returns}" if t.spec.returns else ""
            lines.append(f"- {t.name}({sig}){returns}{flag}: {t.spec.description}")
            for n, p in props.items():
                if p.get("description"):
                    lines.append(f"    {n}: {p['description']}")
        return "\n".join(lines)

    def catalog_summary(self) -> str:
        """What the tools are for, one line each, without argument schemas (``catalog_summary``)."""
        return catalog_summary(self.catalog_text())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def catalog_summary(catalog_text: str) -> str:
    """The tool list of ``ToolRegistry.catalog_text`` cut to what a role that chooses no arguments needs (the
    router): each tool's name and purpose, ``- name -> returns [permission]: description``, without the argument
    signature, the argument descriptions and a closing ", e.g. <example call>" (examples show how to write the
    arguments). Roles receive the catalog as text (also when an MCP server's tool list changes), so the summary is
    derived from it; a line that does not read as a tool line is kept as is.

    >>> print(catalog_summary('- calc(expr: str, mode: "a"|"b(c)") -> number: Evaluate it, e.g. "(1 + 2) * 3".\\n'
    ...                       '    expr: The expression.\\n- rm(path: str) [admin]: Delete a file.'))
    - calc -> number: Evaluate it.
    - rm [admin]: Delete a file.
    """
    return _summary(catalog_text)


@functools.lru_cache(maxsize=8)
def _summary(catalog_text: str) -> str:
    # Read on every router call, while the catalog changes only with the tools: parsed once per catalog.
    lines = []
    for line in catalog_text.splitlines():
        if line.startswith(_ARG_INDENT):
            continue  # an argument's description
        head = _tool_head(line)
        if head is not None:
            rest = line[head[2]:]
            example = rest.find(_EXAMPLE)
            line = f"- {head[0]}{rest if example < 0 else rest[:example] + '.'}"
        lines.append(line)
    return "\n".join(lines)


def catalog_params(catalog_text: str) -> dict[str, list[str]]:
    """Each tool's parameters in signature order, read from ``catalog_text`` (to show a plan's calls with
    arguments by position, as the planner writes them)."""
    return {name: list(names) for name, names in _params(catalog_text)}


@functools.lru_cache(maxsize=8)
def _params(catalog_text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    # Read on every reflector call, while the catalog changes only with the tools: parsed once per catalog
    # (kept immutable; each caller gets its own dict).
    params: dict[str, tuple[str, ...]] = {}
    for line in catalog_text.splitlines():
        head = _tool_head(line)
        if head is not None:
            params[head[0]] = tuple(p.split(":", 1)[0].strip() for p in _split_top(head[1]) if p.strip())
    return tuple(params.items())


def catalog_without_examples(catalog_text: str, tools: Collection[str]) -> str:
    """``catalog_text`` with the closing ", e.g. <example>" of the named tools' lines cut (their argument lines
    too): the planner's repair round after it copied a tool's example into a plan (``planning.blind_calls``).

    >>> catalog_without_examples('- calc(expr: str) -> number: Evaluate, e.g. "(1 + 2) * 3".\\n- f(x: str): F.', {"calc"})
    '- calc(expr: str) -> number: Evaluate.\\n- f(x: str): F.'
    """
    lines, current = [], None
    for line in catalog_text.splitlines():
        head = _tool_head(line)
        if head is not None:
            current = head[0]
        elif not line.startswith(_ARG_INDENT):
            current = None
        example = line.find(_EXAMPLE, head[2] if head is not None else 0)
        lines.append(line[:example] + "." if current in tools and example >= 0 else line)
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)
def catalog_entries(catalog_text: str) -> dict[str, str]:
    """Each tool's lines of ``catalog_text``: its line and its arguments' descriptions (what a model read about it).

    >>> catalog_entries('- find(q: str) -> list: Search.\\n    q: Words, e.g. "rye bread".\\n- save(x: str): Save.')
    {'find': '- find(q: str) -> list: Search.\\n    q: Words, e.g. "rye bread".', 'save': '- save(x: str): Save.'}
    """
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in catalog_text.splitlines():
        head = _tool_head(line)
        if head is not None:
            current = entries.setdefault(head[0], [])
            current.append(line)
        elif current is not None and line.startswith(_ARG_INDENT):
            current.append(line)
        else:
            current = None
    return {name: "\n".join(lines) for name, lines in entries.items()}


def catalog_permissions(catalog_text: str) -> dict[str, Permission]:
    """Each tool's permission, read from ``catalog_text`` (the `` [write]`` / `` [admin]`` flag of its line; none:
    read), so a role that holds only the catalog knows which calls are side effects.

    The flag is searched up to the end of the line, past the return kind (free text) into the description:
    a description that happens to hold `` [write]:`` makes its tool a write, which only ever makes a caller more
    careful with it.

    >>> catalog_permissions('- find(q: str) -> list[str]: Search.\\n    q: Words.\\n- save(x: str) [write]: Save.')
    {'find': 'read', 'save': 'write'}
    """
    permissions: dict[str, Permission] = {}
    for line in catalog_text.splitlines():
        head = _tool_head(line)
        if head is not None:
            flag = _PERMISSION_FLAG.search(line, head[2])
            permissions[head[0]] = "read" if flag is None else "admin" if flag.group(1) == "admin" else "write"
    return permissions


_ARG_INDENT = "    "
_EXAMPLE = ", e.g. "
_PERMISSION_FLAG = re.compile(r" \[(write|admin)\]:")


def _tool_head(line: str) -> tuple[str, str, int] | None:
    """(name, signature, index after its closing parenthesis) of a catalog tool line ``- name(sig)…``, or None.
    The signature may hold JSON strings (enum values) with brackets in them, so it is scanned, not matched."""
    if not line.startswith("- ") or "(" not in line:
        return None
    name = line[2:line.index("(")]
    if not name or any(c.isspace() for c in name):
        return None
    opening = line.index("(")
    for i, c, depth in _structure(line, opening):
        if c in ")]}" and depth == 0:
            return name, line[opening + 1:i], i + 1
    return None


def _split_top(signature: str) -> list[str]:
    """``signature`` split at the commas outside brackets and JSON strings."""
    parts, start = [], 0
    for i, c, depth in _structure(signature):
        if c == "," and depth == 0:
            parts.append(signature[start:i])
            start = i + 1
    return [*parts, signature[start:]]


def _structure(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) of every character of ``text`` from ``start`` that lies outside
    a JSON string: the one scan both readers of a catalog line need."""
    depth, quoted, escaped = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if quoted:
            escaped, quoted = (not escaped and c == "\\"), quoted and (escaped or c != '"')
            continue
        if c == '"':
            quoted = True
            continue
        depth += (c in "([{") - (c in ")]}")
        yield i, c, depth


def _type_name(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "|".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    if "anyOf" in prop:
        return "|".join(_type_name(p) for p in prop["anyOf"])
    kind = prop.get("type", "any")
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"list[{_type_name(prop['items'])}]"
    if isinstance(kind, list):
        return "|".join(kind)
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "object",
            "null": "null"}.get(kind, kind)


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "additionalProperties"}
