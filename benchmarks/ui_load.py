"""Does an open web view slow tasks down? 200 concurrent tasks on one store, with and without `tetrarch ui`
serving that store to a page (the task list's live stream and two task pages' streams, read continuously).

The tasks run in this process on the real Supervisor core and SQLite store (scripted roles, two parallel
0.5 s tool steps each); the web view runs as its own process, as `tetrarch ui` does, and curl plays the browser.
Rounds alternate without / with the page; the report gives each round's throughput and the medians.

    python -m benchmarks.ui_load [--tasks 200] [--rounds 3] [--out benchmarks/results/ui-load.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from agents import RuntimeConfig, tool
from agents.engine.runtime import LocalRuntime
from agents.engine.supervisor import SupervisorCore
from agents.llm import FunctionLLM
from agents.roles.executor import Executor
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.store import Store
from agents.tools import MemoryJournal, ToolRegistry

__all__ = ["main"]


@tool
async def wait(seconds: float, label: str) -> str:
    """Sleep, then return the label.

    Args:
        seconds: How long to sleep.
        label: Text to return.
    """
    await asyncio.sleep(seconds)
    return label


_PLAN = json.dumps({"steps": [
    {"step_id": i, "description": f"wait {i}", "tool_name": "wait", "tool_input": {"seconds": 0.5, "label": str(i)},
     "depends_on": []} for i in (1, 2)]})
_ROUTE = json.dumps({"route": "plan", "confidence": 1.0, "reason": "", "answer": None})
_ACCEPT = json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                      "action": "accept", "retry_details": None, "feedback": "", "answer": "ok"})


def _runtime(config: RuntimeConfig) -> LocalRuntime:
    """The roles wired in-process, as tests/support/local.py does (copied: benchmarks never import tests)."""
    llm = FunctionLLM(lambda r: {"router": _ROUTE, "planner": _PLAN, "reflector": _ACCEPT}[r.role])
    registry = ToolRegistry([wait])
    journal = MemoryJournal()
    return LocalRuntime(
        Router(llm, registry.catalog_text(), config.router_options()),
        Planner(llm, registry.schemas(), registry.catalog_text(), config.planner_options()),
        [Executor([wait], llm, config.executor_options(), name=f"executor-{i}", journal=journal) for i in range(4)],
        Reflector(llm, config.prompt_options(), registry.catalog_text()),
        {t.name: t.spec for t in registry},
    )


async def _round(db: Path, tasks: int) -> float:
    """Seconds from the first submit until every task's result is stored."""
    config = RuntimeConfig(store_path=db, token_budget=None, max_llm_calls=None)
    core = SupervisorCore(Store(db), _runtime(config), config)
    try:
        started = time.perf_counter()
        ids = await asyncio.gather(*(core.submit(f"task {i}: wait twice") for i in range(tasks)))

        async def done(task_id: str) -> None:
            while await core.wait_result(task_id, timeout_s=60) is None:
                pass

        await asyncio.gather(*(done(t) for t in ids))
        return time.perf_counter() - started
    finally:
        await core.shutdown()


class _Page:
    """`tetrarch ui` on the store, and curl reading the list's stream and two task pages' streams."""

    def __init__(self, db: Path) -> None:
        self.ui = subprocess.Popen([sys.executable, "-m", "agents.cli", "ui", "--store", str(db), "--port", "0",
                                    "--read-only"], stdout=subprocess.PIPE, text=True)
        line = self.ui.stdout.readline() if self.ui.stdout else ""
        self.url = line.split()[3].rstrip("/")
        self.readers = [self._curl("/api/tasks/stream")]

    def _curl(self, path: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["curl", "-sN", self.url + path, "-o", "/dev/null"])

    def follow_tasks(self) -> None:
        """Open two task pages, as a user watching the list would."""
        rows = json.loads(urllib.request.urlopen(self.url + "/api/tasks", timeout=30).read())
        self.readers += [self._curl(f"/api/tasks/{r['task_id']}/stream") for r in rows[:2]]

    def close(self) -> None:
        for proc in [*self.readers, self.ui]:
            proc.terminate()
            proc.wait(20)


_LIST_S: list[float] = []
"""How long the list of every task took to serve while they ran (seconds per request)."""


def _time_list(url: str) -> None:
    started = time.perf_counter()
    rows = json.loads(urllib.request.urlopen(url + "/api/tasks", timeout=30).read())
    if rows:
        _LIST_S.append(time.perf_counter() - started)


async def _with_page(db: Path, tasks: int) -> float:
    Store(db).close()
    page = _Page(db)
    try:
        run = asyncio.ensure_future(_round(db, tasks))
        await asyncio.sleep(0.5)
        await asyncio.to_thread(page.follow_tasks)
        while not run.done():
            await asyncio.to_thread(_time_list, page.url)
            await asyncio.sleep(1.0)
        return await run
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ui_load", description=__doc__.split("\n")[0])
    p.add_argument("--tasks", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ui-load.json"))
    args = p.parse_args(argv)
    rounds: dict[str, list[float]] = {"without_page": [], "with_page": []}
    for i in range(args.rounds):
        for name, run in (("without_page", _round), ("with_page", _with_page)):
            db = Path(tempfile.mkdtemp(prefix="tetrarch-uiload-")) / "s.db"
            wall = asyncio.run(run(db, args.tasks))
            rounds[name].append(args.tasks / wall)
            print(f"round {i + 1} {name}: {args.tasks} tasks in {wall:.2f} s ({args.tasks / wall:.1f} tasks/s)",
                  flush=True)
    report: dict[str, Any] = {"tasks": args.tasks, "rounds": rounds,
                              "median_tasks_per_s": {k: round(statistics.median(v), 2) for k, v in rounds.items()},
                              "list_request_ms": {"requests": len(_LIST_S),
                                                  "median": round(statistics.median(_LIST_S) * 1000, 1),
                                                  "max": round(max(_LIST_S) * 1000, 1)} if _LIST_S else None}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: report[k] for k in ("median_tasks_per_s", "list_request_ms")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
