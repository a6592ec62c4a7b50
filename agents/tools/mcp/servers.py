"""MCP servers as tool sources: the configuration a user passes in ``tools=[...]``.

These are plain, frozen pydantic models with no connection inside: they pickle to Ray workers, and each
process opens its own session lazily on the first call (``agents.tools.mcp.connection``). Importing this
module does not import the MCP SDK.

    >>> from agents.tools import MCPServerStdio, MCPServerHTTP
    >>> MCPServerStdio("python", ["my_server.py"], prefix="notes").label
    'python my_server.py'
    >>> MCPServerHTTP("http://127.0.0.1:8931/mcp").label
    'http://127.0.0.1:8931/mcp'
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pydantic

from agents.tools.decorator import Permission

__all__ = ["MCPServer", "MCPServerHTTP", "MCPServerStdio", "MCPToolOverride"]

ProtocolMode = Literal["auto", "legacy"]


class MCPToolOverride(pydantic.BaseModel):
    """Per-tool changes to what the server's annotations imply. ``None`` keeps the derived value.

        >>> MCPToolOverride(permission="read")          # trust a tool the server did not annotate
        MCPToolOverride(permission='read', requires_confirmation=None, idempotent=None, timeout_s=None, secret_params=(), description=None)
    """

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    permission: Permission | None = None
    requires_confirmation: bool | None = None
    idempotent: bool | None = None
    timeout_s: float | None = pydantic.Field(default=None, gt=0)
    secret_params: tuple[str, ...] = ()
    """Arguments redacted from events, checkpoints and traces (API keys passed as arguments)."""
    description: str | None = None


class MCPServer(pydantic.BaseModel):
    """What every MCP tool source shares. Use ``MCPServerStdio`` or ``MCPServerHTTP``."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    prefix: str | None = None
    """Tool names become ``<prefix>_<name>``: two servers may both offer ``search``."""
    name: str | None = None
    """How errors and docs name this server; defaults to the command line or the URL."""
    include: tuple[str, ...] | None = None
    """Only these tools (server-side names); ``None`` takes every tool the server lists."""
    exclude: tuple[str, ...] = ()
    overrides: Mapping[str, MCPToolOverride] = pydantic.Field(default_factory=dict)
    """Server-side tool name → override of its permission, confirmation, timeout, secrets."""
    confirm_destructive: bool = True
    """Tools that may be destructive (``destructiveHint``, which the MCP spec presumes for every tool not
    marked ``readOnlyHint``) escalate for a human's approval before they run."""
    timeout_s: float | None = pydantic.Field(default=None, gt=0)
    """Default per-call timeout of this server's tools (the step timeout applies as well)."""
    connect_timeout_s: float = pydantic.Field(default=30.0, gt=0)
    reconnect_backoff_s: float = pydantic.Field(default=0.5, gt=0)
    """After a failed (re)connect, the next attempt waits this long, doubling up to 30 s."""
    protocol: ProtocolMode = "auto"
    """``auto`` negotiates the newest protocol both sides speak; ``legacy`` forces the 2025 handshake."""

    @pydantic.field_validator("prefix")
    @classmethod
    def _prefix_is_identifier(cls, value: str | None) -> str | None:
        if value is not None and not value.isidentifier():
            raise ValueError(f"prefix {value!r} must be an identifier (letters, digits, underscores)")
        return value

    @pydantic.field_validator("overrides", mode="before")
    @classmethod
    def _overrides_from_dicts(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: MCPToolOverride.model_validate(v) if isinstance(v, Mapping) else v for k, v in value.items()}
        return value

    @property
    def label(self) -> str:
        """A short, human name for messages: ``name``, else the command line or URL."""
        return self.name or self._default_label()

    def _default_label(self) -> str:
        raise NotImplementedError

    def key(self) -> str:
        """Identity of the server configuration: one session per key per process."""
        return f"{type(self).__name__}:{self.model_dump_json()}"


class MCPServerStdio(MCPServer):
    """An MCP server started as a subprocess, spoken to over its stdin/stdout.

    One process per server configuration per Python process that calls its tools: on a cluster, one per
    executor actor (started on its first call), plus a short-lived one in the driver to list the tools.

        >>> s = MCPServerStdio("python", ["server.py"], env={"TOKEN": "…"}, prefix="fs",
        ...                    overrides={"delete": {"requires_confirmation": True}})
        >>> s.args, "TOKEN" in repr(s)
        (('server.py',), False)
    """

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = pydantic.Field(default=None, repr=False)
    """Extra environment variables (merged over the SDK's safe defaults); kept out of reprs."""
    cwd: str | None = None

    def __init__(self, command: str, args: Sequence[str] = (), /, **kwargs: Any) -> None:
        super().__init__(command=command, args=tuple(args), **kwargs)

    def _default_label(self) -> str:
        # The executable's base name: a venv's absolute python path would drown the useful part.
        return shlex.join([os.path.basename(self.command), *self.args])


class MCPServerHTTP(MCPServer):
    """An MCP server reached over streamable HTTP at ``url``; every executor connects to it by URL.

        >>> MCPServerHTTP("http://127.0.0.1:8931/mcp", headers={"Authorization": "Bearer …"}).url
        'http://127.0.0.1:8931/mcp'
    """

    url: str
    headers: Mapping[str, str] | None = pydantic.Field(default=None, repr=False)
    """Sent with every request (authorization); kept out of reprs and error messages."""

    def __init__(self, url: str, /, **kwargs: Any) -> None:
        super().__init__(url=url, **kwargs)

    @pydantic.field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"url {value!r} must start with http:// or https://")
        return value

    def _default_label(self) -> str:
        return self.url
