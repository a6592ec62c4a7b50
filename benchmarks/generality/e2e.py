"""The suite end to end on a real model: tetrarch (``Orchestrator(llm=None)``: the embedded model for router,
planner and reviewer, ONE Orchestrator holding every tool of the suite, as a user with many tools has) beside the
ReAct baselines on the same model and tools. Each answer is scored right / accepted wrong / other (``scoring``).

``run_systems`` is the loop (any runner per system, so the scoring is tested with ``FunctionLLM``);
``run_local`` starts the embedded model and folds the run into the one report (``e2e_report``).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.results import TaskResult
from benchmarks.generality.e2e_report import HALF_NAMES, REPORT, write_report
from benchmarks.generality.model import GenTask
from benchmarks.generality.scoring import verdict

__all__ = ["E2ERecord", "run_local", "run_systems", "tally"]

SYSTEMS = ("tetrarch", "react", "react_parallel")
TASK_TIMEOUT_S = 240.0
"""A task still running after this is stopped and scored "other" (the machine's model is shared: a sample must
finish in minutes)."""


@dataclass(frozen=True, slots=True)
class E2ERecord:
    task_id: str
    shape: str
    lang: str
    system: str
    status: str
    verdict: str
    answer: str | None
    wall_s: float
    llm_calls: int
    error: str | None = None
    """Why a run that was not accepted ended so (the task's error, or the question back), for diagnosis."""


def run_systems(tasks: Sequence[GenTask], runners: Mapping[str, Callable[[str], TaskResult]],
                progress: Callable[[str], None] = print,
                on_record: Callable[[list[E2ERecord]], None] | None = None) -> list[E2ERecord]:
    """Each task on each system (``runners``: system -> run(question) -> TaskResult), scored; ``on_record`` sees
    the records so far after each run (to save partial results of a long run)."""
    records: list[E2ERecord] = []
    for task in tasks:
        for system, run in runners.items():
            t0 = time.monotonic()
            try:
                result = run(task.question)
                status, answer, calls = result.status, result.answer, result.usage.total.llm_calls
                error = result.error or getattr(result, "question", None)
            except Exception as e:  # noqa: BLE001 - a crashed run is scored "other" and the suite goes on
                status, answer, calls, error = "failed", f"{type(e).__name__}: {e}", 0, None
            rec = E2ERecord(task.id, task.shape, task.lang, system, status, verdict(task.expect, status, answer),
                            answer, round(time.monotonic() - t0, 2), calls, error)
            records.append(rec)
            if on_record is not None:
                on_record(records)
            progress(f"  {task.id:34} {system:14} {rec.status:9} {rec.verdict:14} {rec.wall_s:6.1f}s  "
                     f"{(answer or '')[:70]!r}")
    return records


def tally(records: Sequence[E2ERecord]) -> dict[str, dict[str, Any]]:
    """Per system: tasks, right, accepted_wrong, other, their shares, and the median wall time."""
    out: dict[str, dict[str, Any]] = {}
    for system in dict.fromkeys(r.system for r in records):
        mine = [r for r in records if r.system == system]
        counts = Counter(r.verdict for r in mine)
        walls = sorted(r.wall_s for r in mine)
        out[system] = {"tasks": len(mine), **{k: counts.get(k, 0) for k in ("right", "accepted_wrong", "other")},
                       "right_share": round(counts.get("right", 0) / len(mine), 3),
                       "accepted_wrong_share": round(counts.get("accepted_wrong", 0) / len(mine), 3),
                       "median_wall_s": walls[len(walls) // 2]}
    return out


def _react_runner(llm: Any, tools: list, config: Any, parallel: bool) -> Callable[[str], TaskResult]:
    from agents.react import ReActAgent

    async def run_and_close(question: str) -> TaskResult:
        try:
            return await ReActAgent(llm, tools, config, parallel=parallel).run(question)
        finally:
            # Each run has its own event loop: its HTTP connections are closed on it, not after it is gone.
            close = getattr(llm, "aclose", None)
            if close is not None:
                await close()

    def run(question: str) -> TaskResult:
        return asyncio.run(run_and_close(question))

    return run


def run_local(tasks: Sequence[GenTask], out_dir: Path, *, systems: Sequence[str] = ("tetrarch",),
              stem: str = REPORT, note: str = "", label: str = "embedded model",
              split: str = "heldout") -> dict[str, Any]:
    """The tasks on the embedded model: ``Orchestrator(llm=None)`` with every tool of the suite, and the ReAct
    baselines on the same server (``orch.llm``). Folds the run into ``out_dir/<stem>.json`` and ``.md``: the
    latest run, and its history row keyed by the minute it started and ``label``."""
    from agents import Orchestrator, RuntimeConfig
    from benchmarks.generality.suite import suite_tools

    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        raise SystemExit(f"unknown system(s) {sorted(unknown)}; use {', '.join(SYSTEMS)}")
    started_at = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    tools = suite_tools()
    store = Path(tempfile.mkdtemp(prefix="tetrarch-e2e-run-")) / "e2e.db"
    print(f"the runs' store, kept to read what each role was sent and said: {store}", flush=True)
    config = RuntimeConfig(store_path=store, task_timeout_s=TASK_TIMEOUT_S)
    orch = Orchestrator(llm=None, tools=tools, config=config)
    try:
        react_config = config
        runners: dict[str, Callable[[str], TaskResult]] = {}
        for system in systems:
            runners[system] = (lambda q: orch.run(q)) if system == "tetrarch" else \
                _react_runner(orch.llm, tools, react_config, parallel=system == "react_parallel")
        model = getattr(orch.llm, "model", "embedded")

        def save(records: list[E2ERecord]) -> dict[str, Any]:
            done = len({r.task_id for r in records})
            partial = "" if done == len(tasks) else f" PARTIAL: {done} of {len(tasks)} tasks run so far."
            doc = {"label": label, "started_at": started_at, "split": split,
                   "note": (note or f"A deterministic spread of the {HALF_NAMES[split]}.") + partial,
                   "model": model, "task_ids": [t.id for t in tasks[:done]], "systems": tally(records),
                   "records": [asdict(r) for r in records]}
            write_report(doc, out_dir, stem)
            return doc

        records = run_systems(tasks, runners, progress=lambda s: print(s, flush=True), on_record=save)
        return save(records)
    finally:
        orch.shutdown()
