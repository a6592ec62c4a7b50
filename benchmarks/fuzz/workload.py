"""The fuzzed task and its tools: what every example asks for and what its plans can call.

Own tools (the benchmarks package never imports tests/): async, so an example costs no thread hops.
"""

from __future__ import annotations

from agents import tool
from agents.tools import Tool
from agents.tools.errors import PermanentToolError

__all__ = ["POPULATIONS", "TASK", "TOOLS", "TOOL_NAMES", "archive", "lookup", "note", "subtract"]

TASK = "How many more million people live in Rome than in Paris?"
POPULATIONS = {"rome": 2.8, "paris": 2.1, "berlin": 3.7}


@tool
async def lookup(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    try:
        return POPULATIONS[city.lower()]
    except KeyError:
        raise PermanentToolError(f"no population known for {city!r}") from None


@tool
async def subtract(a: float, b: float) -> float:
    """a minus b.

    Args:
        a: Minuend.
        b: Subtrahend.
    """
    return round(a - b, 6)


@tool(permission="write")
async def note(text: str) -> str:
    """Append a note (a write tool: journaled, applied once).

    Args:
        text: The note.
    """
    return f"noted {len(text)} characters"


@tool(permission="write", requires_confirmation=True)
async def archive(record_id: str) -> str:
    """Archive a record (needs a human's confirmation: a plan naming it escalates).

    Args:
        record_id: The record.
    """
    return f"archived {record_id}"


TOOLS: tuple[Tool, ...] = (lookup, subtract, note, archive)
TOOL_NAMES = tuple(t.name for t in TOOLS)
