"""The reviewer alone on the generality suite: given the task's right plan, executed, does it write the right answer?

End to end, a right plan does not make a right answer: on the held-out half the 1.5B reviewer wrote "451210.00"
for a ratio the calculator had computed as 0.6607, and left the difference out of "who has more, and by how
much". This runs each task through the real engine (in-process, no Ray) with the router and the planner scripted
to the task's right plan and every other call (the reviewer, a reasoning step) made to the real model, so reviewer
prompts can be compared side by side on the dev half without the planner's noise:

- ``right``: accepted with an answer the suite's scorer counts right;
- ``accepted_wrong``: accepted with a wrong answer;
- ``other``: replanned to exhaustion, escalated or failed.

    python -m benchmarks.generality.review_probe --split dev --limit 24 --reflector v8 --reflector v8:sound,numeric
    python -m benchmarks.generality.review_probe --split dev --computed --reflector v8   # the 21 that compute

A variant is a reviewer template version, optionally with the built-in check sets after a colon (default: the
embedded model's configuration, ``sound``).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.config import RuntimeConfig, for_embedded_model
from agents.engine.sink import MemorySink
from agents.engine.task_runner import TaskRunner
from agents.engine.task_state import TaskState
from agents.llm.base import LLM, LLMReply, LLMRequest
from benchmarks.generality.model import GenTask
from benchmarks.generality.plan_probe import report
from benchmarks.generality.scoring import verdict
from benchmarks.generality.scripted import Script, runtime_for, scripted_llm
from benchmarks.generality.suite import SPLITS, select, suite_tools

__all__ = ["ReviewRow", "ScriptedPlanLLM", "computes", "review", "summary"]

SCRIPTED_ROLES = frozenset({"router", "planner"})


class ScriptedPlanLLM:
    """The router and the planner as a correct model (``scripted_llm``); every other role asks ``model``."""

    def __init__(self, script: Script, model: LLM) -> None:
        self._scripted = scripted_llm(script, [])
        self._model = model

    def _for(self, request: LLMRequest) -> LLM:
        return self._scripted if request.role in SCRIPTED_ROLES else self._model

    async def complete(self, request: LLMRequest) -> LLMReply:
        return await self._for(request).complete(request)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        async for item in self._for(request).stream(request):
            yield item


@dataclass(frozen=True, slots=True)
class ReviewRow:
    task_id: str
    lang: str
    reflector: str
    verdict: str
    status: str
    answer: str | None
    llm_calls: int
    wall_s: float


async def review(tasks: Sequence[GenTask], model: LLM, variant: str, store: Path) -> list[ReviewRow]:
    """Each task's right plan executed and reviewed by ``model`` with the reviewer ``variant`` ("v8", or
    "v8:sound,numeric" with those check sets; the embedded model's configuration otherwise)."""
    version, _, checks = variant.partition(":")
    config = for_embedded_model(RuntimeConfig(store_path=store, token_budget=None, max_llm_calls=60))
    update: dict[str, object] = {"prompt_versions": {**config.prompt_versions, "reflector": version}}
    if checks:
        update["builtin_checks"] = tuple(checks.split(","))
    config = RuntimeConfig.model_validate({**config.model_dump(), **update})
    tools = suite_tools()
    rows = []
    for task in tasks:
        t0 = time.monotonic()
        llm = ScriptedPlanLLM(Script(task.question, task.plan, task.answer), model)
        state = TaskState(task_id=f"review-{task.id}", task=task.question, submitted_at=time.time())
        runner = TaskRunner(state, config=config, runtime=runtime_for(llm, tools, config),
                            sink=MemorySink(state.task_id))
        result = await runner.run()
        rows.append(ReviewRow(task.id, task.lang, variant,
                              verdict(task.expect, str(result.status), result.answer), str(result.status),
                              result.answer, result.usage.total.llm_calls, round(time.monotonic() - t0, 1)))
    return rows


def computes(task: GenTask) -> bool:
    """The task's right plan has a tool step that combines two or more steps' results (a calculator's difference,
    ratio or total)."""
    return any(s.get("tool_name") and len(s.get("depends_on") or ()) >= 2 for s in task.plan["steps"])


def summary(rows: Sequence[ReviewRow]) -> dict[str, dict[str, float]]:
    """Per reviewer version: tasks, right, accepted wrong, other, and the total wall time."""
    out: dict[str, dict[str, float]] = {}
    for version in dict.fromkeys(r.reflector for r in rows):
        mine = [r for r in rows if r.reflector == version]
        out[version] = {"tasks": len(mine), "right": sum(r.verdict == "right" for r in mine),
                        "accepted_wrong": sum(r.verdict == "accepted_wrong" for r in mine),
                        "other": sum(r.verdict == "other" for r in mine),
                        "wall_s": round(sum(r.wall_s for r in mine), 1)}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.generality.review_probe")
    p.add_argument("--split", choices=SPLITS, default="dev")
    p.add_argument("--limit", type=int, default=24)
    p.add_argument("--reflector", action="append", required=True,
                   help="reviewer variant(s): a template version, e.g. v8, or v8:sound,numeric with check sets")
    p.add_argument("--computed", action="store_true",
                   help="only tasks whose right plan has a tool step combining two or more results, the first "
                        "--limit of them: where the reviewer's answer must carry a figure the plan computed")
    p.add_argument("--out", type=Path, help="write every row and the summary here (JSON)")
    args = p.parse_args(argv)
    import tempfile

    from agents.llm.factory import build_llm

    tasks = [t for t in select(args.split) if computes(t)][:args.limit] if args.computed else select(
        args.split, args.limit)
    llm = build_llm("local", start_local=True)

    async def every_version(store: Path) -> list[ReviewRow]:  # one event loop: the model client is bound to it
        rows: list[ReviewRow] = []
        for task in tasks:  # interleaved task by task: the machine's drift falls on every version alike
            for version in args.reflector:
                rows += await review([task], llm, version, store)
        return rows

    with tempfile.TemporaryDirectory(prefix="tetrarch-review-probe-") as tmp:
        rows = asyncio.run(every_version(Path(tmp) / "review.db"))
    return report(args.split, tasks, summary(rows), rows, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
