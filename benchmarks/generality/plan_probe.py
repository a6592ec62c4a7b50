"""The planner alone on the generality suite: does its first plan look up what the task needs?

An end-to-end run takes ~15 minutes for 24 tasks and mixes the planner's choices with the reviewer's; this asks
only the planner (the real ``Planner`` role: its repair round included, nothing executed) and scores each plan
against the task's scripted right plan, so planner prompts can be compared side by side on the dev half in one
run before an end-to-end measurement:

- ``lookups``: the plan calls the same user tools as the right plan (the calculator aside), at least as often;
- ``computes``: when the right plan computes, a calculator step computes from another step's result;
- ``reasoning``: how many reasoning steps (no tool) it has, each one more model call when it runs.

    python -m benchmarks.generality.plan_probe --split dev --limit 40 --planner v10 --planner v11
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.llm.base import LLM
from agents.roles.messages import PlanCompleted
from agents.roles.planner import Planner
from benchmarks.generality.model import GenTask
from benchmarks.generality.suite import SPLITS, select, suite_tools

__all__ = ["ProbeRow", "probe", "report", "score_plan", "summary"]


@dataclass(frozen=True, slots=True)
class ProbeRow:
    task_id: str
    lang: str
    planner: str
    lookups: bool
    computes: bool
    reasoning: int
    steps: list[dict[str, Any]]
    wall_s: float


def _reads(steps: Sequence[dict[str, Any]]) -> list[str]:
    return [s["tool_name"] for s in steps if s.get("tool_name") not in (None, "calculator")]


def score_plan(task: GenTask, steps: Sequence[dict[str, Any]] | None) -> tuple[bool, bool, int]:
    """(lookups, computes, reasoning) of a plan (wire steps; None: no valid plan) against the task's right plan.

        >>> from benchmarks.generality.suite import select
        >>> task = select("dev")[0]
        >>> score_plan(task, task.plan["steps"])[:2], score_plan(task, None)
        ((True, True), (False, False, 0))
    """
    if steps is None:
        return False, False, 0
    want, got = _reads(task.plan["steps"]), _reads(steps)
    lookups = set(got) == set(want) and len(got) >= len(want)
    computing = any(s["tool_name"] == "calculator" for s in task.plan["steps"])
    computes = lookups and (not computing or any(
        s.get("tool_name") == "calculator" and "$" in json.dumps(s.get("tool_input")) for s in steps))
    return lookups, computes, sum(1 for s in steps if s.get("tool_name") is None)


async def probe(tasks: Sequence[GenTask], llm: LLM, planner_version: str) -> list[ProbeRow]:
    """Each task's plan from the real planner role with ``planner_version`` (the embedded model's config)."""
    from agents.config import RuntimeConfig, for_embedded_model
    from agents.tools import ToolRegistry

    config = for_embedded_model(RuntimeConfig())
    config = config.model_copy(update={"prompt_versions": {**config.prompt_versions, "planner": planner_version}})
    registry = ToolRegistry(suite_tools())
    planner = Planner(llm, registry.schemas(), registry.catalog_text(), config.planner_options())
    rows = []
    for task in tasks:
        t0, steps = time.monotonic(), None
        async for item in planner.plan(task.id, task.question):
            if isinstance(item, PlanCompleted):
                steps = [s.model_dump(mode="json") for s in item.plan.steps]
        lookups, computes, reasoning = score_plan(task, steps)
        rows.append(ProbeRow(task.id, task.lang, planner_version, lookups, computes, reasoning, steps or [],
                             round(time.monotonic() - t0, 1)))
    return rows


def summary(rows: Sequence[ProbeRow]) -> dict[str, dict[str, float]]:
    """Per planner version: tasks, valid plans, plans with the right look-ups, with the right look-ups and computation,
    reasoning steps, and the planner's total wall time."""
    out: dict[str, dict[str, float]] = {}
    for version in dict.fromkeys(r.planner for r in rows):
        mine = [r for r in rows if r.planner == version]
        out[version] = {"tasks": len(mine), "plans": sum(bool(r.steps) for r in mine),
                        "lookups": sum(r.lookups for r in mine),
                        "computes": sum(r.computes for r in mine), "reasoning_steps": sum(r.reasoning for r in mine),
                        "wall_s": round(sum(r.wall_s for r in mine), 1)}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.generality.plan_probe")
    p.add_argument("--split", choices=SPLITS, default="dev")
    p.add_argument("--limit", type=int, default=40)
    p.add_argument("--planner", action="append", required=True, help="planner template version(s), e.g. v10")
    p.add_argument("--out", type=Path, help="write every row and the summary here (JSON)")
    args = p.parse_args(argv)
    from agents.llm.factory import build_llm

    llm, tasks = build_llm("local", start_local=True), select(args.split, args.limit)

    async def every_version() -> list[ProbeRow]:  # one event loop: the model client is bound to it
        return [row for version in args.planner for row in await probe(tasks, llm, version)]

    rows = asyncio.run(every_version())
    return report(args.split, tasks, summary(rows), rows, args.out)


def report(split: str, tasks: Sequence[GenTask], totals: dict[str, dict[str, float]], rows: Sequence[Any],
           out: Path | None) -> int:
    """A probe's end: every row (dataclasses) and the summary to ``out`` as JSON, the summary to stdout."""
    result = {"split": split, "task_ids": [t.id for t in tasks], "summary": totals,
              "rows": [asdict(r) for r in rows]}
    if out:
        out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(totals, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
