"""Errors of MCP-backed tools, placed in the tool error tree so the executor reacts as it does to any tool:

- ``MCPToolError`` (permanent) — the server answered ``isError``; the reflector sees the server's message.
- ``MCPConnectionError`` (transient) — the server could not be reached or the session broke before the call
  was sent; retried with backoff, each retry reconnecting.
- ``MCPCallInterruptedError`` (permanent) — the session broke while a non-idempotent call was in flight:
  whether its side effect applied is unknown, so it is not blindly repeated.
- ``MCPListError`` — the tools of a server could not be listed at start-up (a setup problem).

All keep the default exception pickling (``cls(*args)`` plus ``__dict__``): they cross Ray intact.
"""

from __future__ import annotations

from agents.tools.errors import PermanentToolError, ToolDefinitionError, TransientToolError

__all__ = ["MCPCallInterruptedError", "MCPConnectionError", "MCPListError", "MCPToolError"]


class MCPToolError(PermanentToolError):
    """The MCP server returned a result with ``isError: true``; the message is the server's text."""

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0,
                 server: str | None = None) -> None:
        super().__init__(message, tool_name=tool_name, attempts=attempts)
        self.server = server


class MCPConnectionError(TransientToolError):
    """The MCP server could not be reached, or its session broke; the next attempt reconnects."""

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0,
                 retry_after: float | None = None, server: str | None = None) -> None:
        super().__init__(message, tool_name=tool_name, attempts=attempts, retry_after=retry_after)
        self.server = server


class MCPCallInterruptedError(PermanentToolError):
    """The session broke during a call of a non-idempotent tool; it may or may not have taken effect."""

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0,
                 server: str | None = None) -> None:
        super().__init__(message, tool_name=tool_name, attempts=attempts)
        self.server = server


class MCPListError(ToolDefinitionError):
    """Listing a server's tools failed (unreachable, crashed on start, bad tool definitions)."""

    def __init__(self, message: str, *, tool_name: str | None = None, attempts: int = 0,
                 server: str | None = None) -> None:
        super().__init__(message, tool_name=tool_name, attempts=attempts)
        self.server = server
