"""Tools from MCP servers (Model Context Protocol), beside ``@tool`` functions.

    >>> from agents.tools import MCPServerStdio, MCPServerHTTP
    >>> orch = Orchestrator(llm=..., tools=[lookup, MCPServerStdio("python", ["server.py"]),
    ...                                     MCPServerHTTP("http://127.0.0.1:8931/mcp")])   # doctest: +SKIP

``servers`` (the configurations) and ``tool`` / ``listing`` do not import the MCP SDK; ``connection``
(the live sessions) does, when a tool is first listed or called. See docs/mcp.md.
"""

from agents.tools.mcp.catalog import ToolCatalog, ToolRefresher, merge_listing
from agents.tools.mcp.errors import MCPCallInterruptedError, MCPConnectionError, MCPListError, MCPToolError
from agents.tools.mcp.listing import (
    alist_server_tools,
    aresolve_tools,
    check_unique,
    list_server_tools,
    mcp_servers,
    resolve_tools,
    tools_changed,
    tools_from_listing,
)
from agents.tools.mcp.servers import MCPServer, MCPServerHTTP, MCPServerStdio, MCPToolOverride
from agents.tools.mcp.tool import MCPTool, ToolAccess, access_of, output_of, spec_from_listing

__all__ = [
    "MCPCallInterruptedError",
    "MCPConnectionError",
    "MCPListError",
    "MCPServer",
    "MCPServerHTTP",
    "MCPServerStdio",
    "MCPTool",
    "MCPToolError",
    "MCPToolOverride",
    "ToolAccess",
    "ToolCatalog",
    "ToolRefresher",
    "access_of",
    "alist_server_tools",
    "aresolve_tools",
    "check_unique",
    "list_server_tools",
    "mcp_servers",
    "merge_listing",
    "output_of",
    "resolve_tools",
    "spec_from_listing",
    "tools_changed",
    "tools_from_listing",
]
