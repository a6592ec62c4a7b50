"""A small MCP server built with the official SDK, for the MCP client tests (both transports).

    python tests/support/mcp_server.py --stdio
    python tests/support/mcp_server.py --http 8931          # streamable HTTP on 127.0.0.1:8931/mcp

Tools: ``population`` (read, returns a number), ``slow`` (read, sleeps), ``save_note`` (destructiveHint:
a write), ``fail`` (returns an ``isError`` result), ``crash`` (kills the server process), ``crash_once``
(kills it the first time a marker file is missing, answers afterwards), ``add_tool`` (registers a new
tool and announces ``tools/list_changed``; with ``$MCP_TEST_TOOLS_FILE`` set, the name is kept there and
every new process of the server offers it too), ``drop_tool`` (removes a tool silently), ``header`` (echoes an HTTP request header). Side effects are
appended to ``$MCP_TEST_LOG`` when set, so tests can count what ran.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

__all__ = ["POPULATIONS", "build_server", "main"]

POPULATIONS = {"paris": 2.1, "rome": 2.8, "berlin": 3.7}
READ = ToolAnnotations(read_only_hint=True)


def _log(line: str) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def build_server() -> MCPServer:
    server = MCPServer("tetrarch-test", log_level="WARNING")

    @server.tool(annotations=READ)
    def population(city: str) -> float:
        """Population of a city in millions."""
        _log(f"population {city}")
        try:
            return POPULATIONS[city.lower()]
        except KeyError:
            raise ToolError(f"no data for {city!r}") from None

    @server.tool(annotations=READ)
    async def slow(seconds: float) -> str:
        """Wait, then say so."""
        _log(f"slow {seconds}")
        await asyncio.sleep(seconds)
        return f"waited {seconds}s"

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def save_note(text: str) -> str:
        """Save a note (a side effect)."""
        _log(f"save_note {text}")
        return "saved"

    @server.tool(annotations=READ)
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(f"refused: {reason}")

    @server.tool(annotations=READ)
    def crash() -> str:
        """Kill the server process mid-call."""
        _log("crash")
        os._exit(3)

    @server.tool(annotations=READ)
    def crash_once(marker: str) -> int:
        """Crash the server the first time (no marker file yet), answer 7 afterwards."""
        path = Path(marker)
        if not path.exists():
            path.write_text("crashed")
            _log("crash_once crashed")
            os._exit(3)
        _log("crash_once answered")
        return 7

    @server.tool(annotations=READ)
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a new tool named ``name`` and tell clients the tool list changed."""
        _add_twice(server, name)
        tools_file = os.environ.get("MCP_TEST_TOOLS_FILE")
        if tools_file:  # a fresh stdio process of this server offers it as well
            with Path(tools_file).open("a", encoding="utf-8") as fh:  # noqa: ASYNC230 - one short line
                fh.write(name + "\n")
        await _announce(ctx)
        return "added"

    @server.tool(annotations=READ)
    def header(name: str, ctx: Context) -> str:
        """The value of the HTTP request header ``name`` ("" when absent, or over stdio)."""
        return (ctx.headers or {}).get(name.lower(), "")

    @server.tool(annotations=READ)
    def drop_tool(name: str) -> str:
        """Remove the tool ``name`` without telling anyone (a client finds out when it calls it)."""
        server.remove_tool(name)
        return "dropped"

    tools_file = os.environ.get("MCP_TEST_TOOLS_FILE")
    if tools_file and Path(tools_file).exists():
        for name in Path(tools_file).read_text().split():
            _add_twice(server, name)
    return server


def _add_twice(server: MCPServer, name: str) -> None:
    def extra(x: int) -> int:
        return 2 * x

    server.add_tool(extra, name=name, description="Twice x.", annotations=READ)


async def _announce(ctx: Context) -> None:
    await ctx.notify_tools_changed()
    # Clients on the 2025 protocol (initialize handshake) get the classic notification instead.
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:  # noqa: BLE001 - modern (2026) sessions have no such notification
        pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", action="store_true")
    group.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args(argv)
    server = build_server()
    if args.stdio:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    sys.exit(main())
