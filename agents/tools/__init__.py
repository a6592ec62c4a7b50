"""Tools: ``@tool`` declarations, MCP servers as tool sources, the registry, the dispatcher with its
retry/timeout/journal policies.

    >>> from agents.tools import tool, ToolRegistry
"""

from agents.idempotency import IdempotencyJournal, JournalEntry, idempotency_key
from agents.tools.builtins import builtin_tools
from agents.tools.decorator import Permission, Tool, ToolSpec, tool
from agents.tools.dispatch import ToolCallResult, ToolDispatcher
from agents.tools.errors import (
    PermanentToolError,
    ToolArgumentError,
    ToolDefinitionError,
    ToolError,
    ToolPermissionError,
    ToolTimeoutError,
    TransientToolError,
    UnknownToolError,
)
from agents.tools.journal import MemoryJournal
from agents.tools.mcp import MCPServer, MCPServerHTTP, MCPServerStdio, MCPToolOverride, resolve_tools
from agents.tools.registry import ToolRegistry

__all__ = [
    "IdempotencyJournal",
    "JournalEntry",
    "MCPServer",
    "MCPServerHTTP",
    "MCPServerStdio",
    "MCPToolOverride",
    "MemoryJournal",
    "PermanentToolError",
    "Permission",
    "Tool",
    "ToolArgumentError",
    "ToolCallResult",
    "ToolDefinitionError",
    "ToolDispatcher",
    "ToolError",
    "ToolPermissionError",
    "ToolRegistry",
    "ToolSpec",
    "ToolTimeoutError",
    "TransientToolError",
    "UnknownToolError",
    "builtin_tools",
    "idempotency_key",
    "resolve_tools",
    "tool",
]
