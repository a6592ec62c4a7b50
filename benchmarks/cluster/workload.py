"""The cluster workload: tasks whose steps are I/O-bound tool calls, answered by a SimulatedLLM.

``fetch`` blocks its thread for ``latency_s`` (like a ``requests`` call): an executor runs synchronous tools
on its asyncio default thread pool (``asyncio.to_thread``; min(32, CPUs + 4) threads), so the number of
blocking calls in flight — and with it the throughput of I/O-bound work — grows with the executor pool, not
with CPU. ``afetch`` is the same call written with ``await`` (an executor holds
``executor_max_concurrency`` of those at once); ``noop`` returns at once (the Supervisor's ceiling).
"""

from __future__ import annotations

import asyncio
import socket
import time

from agents.llm.simulated import GoldTask
from agents.tools import tool

__all__ = ["TOOLS", "afetch", "fetch", "gold_tasks", "noop", "task_text", "where"]


@tool
def fetch(key: str, latency_s: float) -> str:
    """Fetch a record from a slow service (blocking I/O).

    Args:
        key: The record's key.
        latency_s: How long the service takes to answer.
    """
    time.sleep(latency_s)
    return f"record {key}"


@tool
async def afetch(key: str, latency_s: float) -> str:
    """Fetch a record from a slow service (asynchronous I/O).

    Args:
        key: The record's key.
        latency_s: How long the service takes to answer.
    """
    await asyncio.sleep(latency_s)
    return f"record {key}"


@tool
def noop(i: int) -> int:
    """Return i at once.

    Args:
        i: Any number.
    """
    return i


@tool
def where(label: str) -> str:
    """Say which host ran this step (its IP address as the node sees it).

    Args:
        label: Echoed back.
    """
    import ray

    ip = ray.util.get_node_ip_address() if ray.is_initialized() else socket.gethostbyname(socket.gethostname())
    time.sleep(0.3)  # long enough for the steps of one task to overlap and spread over the executors
    return f"{label}@{ip}"


TOOLS = [fetch, afetch, noop, where]


def task_text(i: int, prefix: str = "job") -> str:
    # Zero-padded and bracketed: SimulatedLLM finds a task by substring, and "job 1" is inside "job 10".
    return f"[{prefix}-{i:05d}] gather the records"


def gold_tasks(n: int, steps: int, tool_name: str, latency_s: float = 0.0, prefix: str = "job") -> list[GoldTask]:
    """``n`` tasks, each a fan-out of ``steps`` independent calls of ``tool_name``."""
    golds = []
    for i in range(n):
        plan = []
        for s in range(1, steps + 1):
            args: dict = {"i": s} if tool_name == "noop" else (
                {"label": f"t{i}s{s}"} if tool_name == "where" else {"key": f"{i}-{s}", "latency_s": latency_s})
            plan.append({"step_id": s, "description": f"call {s}", "tool_name": tool_name, "tool_input": args,
                         "depends_on": []})
        golds.append(GoldTask(task=task_text(i, prefix), plan=plan, answer=f"{steps} records"))
    return golds
