"""An MCP server's tool as an ordinary tetrarch ``Tool``: same spec, same validation, same dispatch.

The Tool carries only the server's configuration and the tool's listing; calling it goes through this
process's shared session (``connection.py``), so it pickles to any Ray worker.

    >>> spec = spec_from_listing(MCPServerHTTP("http://127.0.0.1:1/mcp", prefix="geo"), {
    ...     "name": "population", "description": "Population in millions.",
    ...     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ...     "annotations": {"readOnlyHint": True}})
    >>> spec.name, spec.permission, spec.requires_confirmation
    ('geo_population', 'read', False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.tools.decorator import Permission, Tool, ToolSpec
from agents.tools.errors import ToolArgumentError, ToolDefinitionError
from agents.tools.mcp.errors import MCPToolError
from agents.tools.mcp.servers import MCPServer, MCPServerHTTP, MCPToolOverride
from planning.parse import drop_titles, inline_refs

__all__ = ["MCPTool", "ToolAccess", "access_of", "output_of", "spec_from_listing"]

_NOT_IDENTIFIER = re.compile(r"\W")


@dataclass(frozen=True, slots=True)
class ToolAccess:
    """What a tool may do, derived from its MCP annotations (then overridden per tool)."""

    permission: Permission
    requires_confirmation: bool
    idempotent: bool


def access_of(annotations: Mapping[str, Any] | None, confirm_destructive: bool,
              override: MCPToolOverride | None = None) -> ToolAccess:
    """``readOnlyHint`` → read; anything else → write. The MCP spec presumes a tool destructive unless it
    says ``destructiveHint: false``, so such writes escalate for confirmation when ``confirm_destructive``.

    >>> access_of({"readOnlyHint": True}, True)
    ToolAccess(permission='read', requires_confirmation=False, idempotent=True)
    >>> access_of({"destructiveHint": False, "idempotentHint": True}, True)
    ToolAccess(permission='write', requires_confirmation=False, idempotent=True)
    """
    hints = annotations or {}
    if hints.get("readOnlyHint") is True:
        access = ToolAccess("read", False, True)
    else:
        destructive = hints.get("destructiveHint") is not False
        access = ToolAccess("write", destructive and confirm_destructive, hints.get("idempotentHint") is True)
    if override is None:
        return access
    return ToolAccess(override.permission or access.permission,
                      access.requires_confirmation if override.requires_confirmation is None
                      else override.requires_confirmation,
                      access.idempotent if override.idempotent is None else override.idempotent)


def _parameters(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    # Same shape as an @tool's schema: flat, no titles, object, unknown names rejected (a misspelt argument
    # name would otherwise be dropped silently) unless the server explicitly allows extra properties.
    params = drop_titles(inline_refs(dict(schema or {})))
    params["type"] = "object"
    params.setdefault("properties", {})
    params["required"] = list(params.get("required", []))
    params.setdefault("additionalProperties", False)
    return params


def _tool_name(server: MCPServer, remote: str) -> str:
    name = _NOT_IDENTIFIER.sub("_", remote)
    if server.prefix:
        name = f"{server.prefix}_{name}"
    if not name.isidentifier():  # starts with a digit
        name = f"mcp_{name}"
    return name


def spec_from_listing(server: MCPServer, listed: Mapping[str, Any]) -> ToolSpec:
    """The ToolSpec of one entry of ``tools/list`` (as the wire dict, camelCase keys)."""
    remote = listed["name"]
    override = server.overrides.get(remote)
    access = access_of(listed.get("annotations"), server.confirm_destructive, override)
    params = _parameters(listed.get("inputSchema"))
    secrets = tuple(override.secret_params) if override else ()
    unknown = set(secrets) - set(params["properties"])
    if unknown:
        raise ToolDefinitionError(f"MCP server {server.label!r}: secret_params {sorted(unknown)} are not "
                                  f"parameters of {remote!r}", tool_name=remote)
    description = (override.description if override and override.description else None) \
        or listed.get("description") or (listed.get("annotations") or {}).get("title") or listed.get("title") \
        or f"{remote} (from MCP server {server.label})"
    timeout = override.timeout_s if override and override.timeout_s else server.timeout_s
    return ToolSpec(name=_tool_name(server, remote), description=description.strip(), parameters=params,
                    permission=access.permission, requires_confirmation=access.requires_confirmation,
                    timeout_s=timeout, idempotent=access.idempotent, secret_params=secrets)


def output_of(server: MCPServer, remote: str, result: Mapping[str, Any], tool_name: str) -> Any:
    """A ``tools/call`` result (wire dict) as the step's output, or ``MCPToolError`` for ``isError``.

    A plain return value that the SDK wrapped as ``{"result": x}`` is ``x`` (so ``$step_N_result`` works as
    with an ``@tool``); otherwise the structured content if any, else the text content joined.
    """
    content = result.get("content") or []
    if result.get("isError"):
        text = _text_of(content) or "the tool reported an error without a message"
        raise MCPToolError(f"MCP tool {remote!r} of server {server.label!r} failed: {text}",
                           tool_name=tool_name, server=server.label)
    structured = result.get("structuredContent")
    if isinstance(structured, Mapping):
        if set(structured) == {"result"}:
            return structured["result"]
        return dict(structured)
    return _text_of(content)


def _text_of(content: list[Mapping[str, Any]]) -> str:
    parts = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "resource" and "text" in (block.get("resource") or {}):
            parts.append(block["resource"]["text"])
        else:  # images, audio, binary resources: a prompt cannot carry them; say what was there
            parts.append(f"[{kind} content{': ' + block['mimeType'] if block.get('mimeType') else ''}]")
    return "\n".join(parts)


class MCPTool(Tool):
    """A tool listed by an MCP server. ``await t.invoke(args)`` validates against the server's JSON Schema,
    then calls the tool through this process's session with the server.

        >>> server = MCPServerHTTP("http://127.0.0.1:8931/mcp")
        >>> t = MCPTool(server, "population", spec_from_listing(server, {"name": "population",
        ...     "description": "Population.", "inputSchema": {"type": "object",
        ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}))
        >>> t.validate_arguments({"city": "Paris"})
        {'city': 'Paris'}
    """

    def __init__(self, server: MCPServer, remote_name: str, spec: ToolSpec) -> None:
        self.server = server
        self.remote_name = remote_name
        self.spec = spec
        self.fn = self._call  # an async bound method: the dispatcher awaits it like an async @tool
        self._hints = None
        self._model = None
        self._validator: Any = None
        self._qualname = spec.name
        self.__name__ = spec.name
        self.__doc__ = spec.description

    def __repr__(self) -> str:
        return f"MCPTool({self.spec.name!r}, server={self.server.label!r}, permission={self.spec.permission!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (MCPTool, (self.server, self.remote_name, self.spec))

    def validate_arguments(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Check arguments against the server's schema before any call; ToolArgumentError lists every problem."""
        from agents.tools.mcp.validation import validate_against

        if not isinstance(args, Mapping):
            raise ToolArgumentError(f"tool {self.name!r} takes a JSON object of arguments, got "
                                    f"{type(args).__name__}", tool_name=self.name)
        if self._validator is None:
            from agents.tools.mcp.validation import compile_schema

            self._validator = compile_schema(self.spec.parameters)
        return validate_against(self._validator, self.spec.parameters, dict(args), self.name)

    async def _call(self, **kwargs: Any) -> Any:
        from agents.tools.mcp.connection import connection_for, is_unknown_tool, note_tools_changed

        connection = connection_for(self.server)
        result = await connection.call_tool(self.name, self.remote_name, kwargs, self.spec.idempotent)
        payload = result.model_dump(by_alias=True, mode="json")
        if payload.get("isError") and is_unknown_tool(_text_of(payload.get("content") or [])):
            note_tools_changed(self.server.key())  # the server dropped it: re-list before the next plan
        return output_of(self.server, self.remote_name, payload, self.name)

