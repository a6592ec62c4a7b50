"""Small deterministic tools used across tests. Module-level so they pickle into Ray workers."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from agents import tool
from agents.tools.errors import PermanentToolError

POPULATIONS = {"paris": 2.1, "rome": 2.8, "berlin": 3.7, "madrid": 3.3, "vienna": 2.0}

# Side effects are counted in files so that they are visible across Ray worker processes.
COUNTER_DIR = Path(os.environ.get("TETRARCH_TEST_COUNTERS", tempfile.gettempdir())) / "tetrarch-test-counters"


def bump(name: str) -> int:
    COUNTER_DIR.mkdir(parents=True, exist_ok=True)
    path = COUNTER_DIR / name
    with open(path, "a") as f:
        f.write("x")
    return path.stat().st_size


def count(name: str) -> int:
    path = COUNTER_DIR / name
    return path.stat().st_size if path.exists() else 0


def reset(name: str) -> None:
    (COUNTER_DIR / name).unlink(missing_ok=True)


@tool
def lookup(city: str) -> float:
    """Population of a city in millions.

    Args:
        city: English city name.
    """
    bump(f"lookup-{city.lower()}")
    try:
        return POPULATIONS[city.lower()]
    except KeyError:
        raise PermanentToolError(f"no population known for {city!r}") from None


@tool
def subtract(a: float, b: float) -> float:
    """a minus b.

    Args:
        a: Minuend.
        b: Subtrahend.
    """
    return round(a - b, 6)


@tool
async def sleepy(seconds: float, label: str) -> str:
    """Wait, then echo the label (an I/O-bound tool).

    Args:
        seconds: How long to wait.
        label: Text to return.
    """
    await asyncio.sleep(seconds)
    return label


@tool
def blocking_sleep(seconds: float, label: str) -> str:
    """Sleep in a thread (a blocking tool), then echo the label.

    Args:
        seconds: How long to sleep.
        label: Text to return.
    """
    time.sleep(seconds)
    return label


@tool(permission="write", requires_confirmation=True)
def delete_record(record_id: str) -> str:
    """Delete a record (needs a human's confirmation).

    Args:
        record_id: The record to delete.
    """
    bump(f"delete-{record_id}")
    return f"deleted {record_id}"


@tool(permission="write")
def append_note(note: str) -> str:
    """Append a note to the journal (a write tool that must apply exactly once).

    Args:
        note: The note.
    """
    n = bump(f"note-{note}")
    return f"noted ({n})"


@tool
def always_fails(x: int) -> int:
    """A tool that always fails permanently.

    Args:
        x: Anything.
    """
    raise PermanentToolError("this tool always fails")


ALL = [lookup, subtract, sleepy, blocking_sleep, delete_record, append_note, always_fails]
