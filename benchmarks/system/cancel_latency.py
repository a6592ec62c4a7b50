"""Cancel latency (issue 62's target: from ``cancel()`` to status cancelled ≤ 1 s on Ray with a tool sleeping
60 s and an LLM call streaming), in process and on local Ray, over a number of repetitions.

Two cases, each cancelled 0.3 s after the work it is about is under way:

- ``async tool + plan stream``: step 1's tool sleeps 60 s (an async tool, cancelled where it awaits) while
  the planner still streams the rest of its plan slowly (16-character chunks, 50 ms apart);
- ``thread tool + plan stream``: the same with a plain (sync) tool blocking its thread 60 s: it is told and
  abandoned (the benchmark releases it once measured, so the abandoned threads do not fill the pool);
- ``review stream``: the plan's one step is done and the reviewer streams a long answer slowly.

The figure is the wall time of ``handle.cancel()``, which returns once the cancelled outcome is stored; the
``tool stopped`` column is when the tool saw its cancellation (in the executor actor on Ray), after the call
was made. ``python -m benchmarks.system.run --only cancel [--quick]`` writes ``benchmarks/results/cancel.md``.
The tests (tests/unit/api/test_cancel_inprocess.py, tests/integration/test_cancel_ray.py) only guard against
a hang: a loaded shared machine stalls for seconds at times.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import Deployment, Orchestrator, RuntimeConfig, tool
from agents.engine.store_cancel import cancel_in_store
from agents.llm import FunctionLLM, LLMRequest

__all__ = ["measure", "run_all", "markdown"]

CASES = {"async tool + plan stream": ("tool", "started", False),
         "thread tool + plan stream": ("thread", "started", False),
         "review stream": ("review", "review", False),
         "async tool + plan stream, through the store": ("tool", "started", True)}
"""Each case: its key in the task's text, the marker that says its work is under way, and whether the cancel
goes through the store (``cancel_in_store``, as ``tetrarch cancel`` from another process does) rather than
through the Orchestrator that runs the task."""
RUNTIMES = ("inprocess", "ray")
SETTLE_S = 0.3
"""How long after the work is under way the cancel comes."""
CHUNK_DELAY_S = 0.05


@tool(permission="read")
async def bench_sleep(seconds: float, marker: str) -> str:
    """Sleeps, noting in files when it starts and when it is cancelled.

    Args:
        seconds: How long to sleep.
        marker: The file prefix for the notes.
    """
    Path(f"{marker}.started").write_text(repr(time.time()))
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        Path(f"{marker}.cancelled").write_text(repr(time.time()))
        raise
    return "slept"


@tool(permission="read")
def bench_block(seconds: float, marker: str) -> str:
    """Blocks its thread for ``seconds`` (or until the benchmark releases it), noting when it starts.

    Args:
        seconds: How long to block.
        marker: The file prefix for the notes.
    """
    Path(f"{marker}.started").write_text(repr(time.time()))
    deadline = time.monotonic() + seconds
    # Released once measured: an abandoned thread holds a worker of its thread pool until it returns.
    while time.monotonic() < deadline and not Path(f"{marker}.release").exists():
        time.sleep(0.05)
    return "blocked"


@tool(permission="read")
def bench_quick(i: int) -> int:
    """Returns i at once.

    Args:
        i: Any number.
    """
    return i


def _step(sid: int, tool_name: str, args: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"step_id": sid, "description": description, "tool_name": tool_name, "tool_input": args,
            "depends_on": [sid - 1] if sid > 1 else []}


def script(root: str) -> Callable[[LLMRequest], str]:
    """Role replies for the benchmark's tasks; each task's text names its case and marker file."""
    route = json.dumps({"route": "plan", "confidence": 1.0, "reason": "", "answer": None})

    def reply(request: LLMRequest) -> str:
        case, marker = re.search(r"cancel-bench \[(\w+)\|([^\]]+)\]", json.dumps(request.messages)).groups()
        if request.role == "router":
            return route
        if request.role == "planner":
            if case in ("tool", "thread"):  # step 2's long description keeps the plan streaming meanwhile
                name = "bench_sleep" if case == "tool" else "bench_block"
                return json.dumps({"steps": [_step(1, name, {"seconds": 60.0, "marker": marker}),
                                             _step(2, "bench_quick", {"i": 2}, "and more " * 300)]})
            return json.dumps({"steps": [_step(1, "bench_quick", {"i": 1})]})
        Path(f"{marker}.review").write_text(repr(time.time()))
        return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                           "action": "accept", "retry_details": None, "feedback": "",
                           "answer": "the answer, written slowly " * 200})
    return reply


def _wait_for(path: Path, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the benchmark's task never reached {path.name}: see its log")
        time.sleep(0.005)


def measure(runtime: str, repeats: int) -> dict[str, list[dict[str, float]]]:
    """``repeats`` cancels of each case on one Orchestrator of ``runtime``; per run the seconds from the call
    to its return (status cancelled) and, for the tool, to the tool's cancellation."""
    root = Path(tempfile.mkdtemp(prefix="tetrarch-cancel-bench-"))
    llm = FunctionLLM(script(str(root)), stream_chunk_size=16, chunk_delay_s=CHUNK_DELAY_S)
    config = RuntimeConfig(store_path=root / "s.db", deployment=Deployment(num_executors=2))
    orch = Orchestrator(llm=llm, tools=[bench_sleep, bench_block, bench_quick], config=config,
                        runtime=runtime)  # type: ignore[arg-type]
    runs: dict[str, list[dict[str, float]]] = {case: [] for case in CASES}
    try:
        for i in range(repeats):
            for n, (case, (key, under_way, via_store)) in enumerate(CASES.items()):
                marker = root / f"{key}-{i}-{n}"
                handle = orch.submit(f"cancel-bench [{key}|{marker}]")
                _wait_for(Path(f"{marker}.{under_way}"))
                time.sleep(SETTLE_S)
                asked_wall, asked = time.time(), time.perf_counter()
                outcome = cancel_in_store(orch.config, handle.task_id, "the benchmark") if via_store \
                    else handle.cancel(by="the benchmark")
                took = time.perf_counter() - asked
                if not outcome.cancelled or handle.result(timeout=30).status != "cancelled":
                    raise RuntimeError(f"the {case} task was not cancelled: {outcome.message}")
                run = {"cancel_s": took}
                if key == "tool":
                    stopped = Path(f"{marker}.cancelled")
                    _wait_for(stopped, 30)
                    run["tool_stopped_s"] = float(stopped.read_text()) - asked_wall
                runs[case].append(run)
                Path(f"{marker}.release").touch()
    finally:
        orch.shutdown()
    return runs


def run_all(repeats: int = 10) -> dict[str, Any]:
    return {"repeats": repeats, "cores": os.cpu_count(), "load_at_start": round(os.getloadavg()[0], 2),
            "runtimes": {runtime: measure(runtime, repeats) for runtime in RUNTIMES},
            "load_at_end": round(os.getloadavg()[0], 2),
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms / {max(values) * 1000:.0f} ms"


def markdown(result: dict[str, Any]) -> list[str]:
    md = ["# Cancel latency", "",
          f"Generated {result['generated_at']} by `python -m benchmarks.system.run --only cancel` on "
          f"{result['cores']} cores shared with other work (1-minute load average "
          f"{result['load_at_start']} at the start, {result['load_at_end']} at the end); "
          f"{result['repeats']} cancels per row, each {SETTLE_S:g} s after the work was under way. "
          "Target: ≤ 1 s on Ray.", "",
          "`cancel()` = the wall time of `handle.cancel()` (through the store: of `cancel_in_store`, which "
          "opens the store, takes the task over and records the cancel, as `tetrarch cancel` does), which "
          "returns once the outcome \"cancelled\" is stored; `tool stopped` = from the call until the 60 s "
          "async tool saw its cancellation (in the executor actor on Ray; through the store, once the "
          "runner's lease watch, every 0.5 s, saw the task taken over).", "",
          "| runtime | case | cancel() median / max | tool stopped median / max | runs (ms) |",
          "|---|---|---|---|---|"]
    for runtime, cases in result["runtimes"].items():
        for case, runs in cases.items():
            cancel = [r["cancel_s"] for r in runs]
            tool = [r["tool_stopped_s"] for r in runs if "tool_stopped_s" in r]
            md.append(f"| {runtime} | {case} | {_ms(cancel)} | {_ms(tool) if tool else '—'} | "
                      f"{', '.join(f'{v * 1000:.0f}' for v in cancel)} |")
    return md
