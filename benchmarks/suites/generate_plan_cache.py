"""Write the plan-cache suites (deterministic: `python -m benchmarks.suites.generate_plan_cache`).

Both are split into a ``warmup`` half (the tasks the cache learns from) and a ``heldout`` half (the tasks it is
measured on). No task appears twice, in either suite or across the halves; the entities of a held-out task are
drawn afresh, so a held-out task reuses a warm-up task's *shape*, never its values.

- plan-cache: eight task kinds (parallel total/range over 3 and 4 cities, the two chain kinds, mixed over 2 and 3
  countries), the same kinds in both halves: reuse should happen.
- plan-cache-shapes: the warm-up half has three kinds, the held-out half one task of each of twelve *other* kinds
  built from the same words (2, 4, 5 or 6 cities instead of 3, a range instead of a total, a density chain
  instead of a founding chain, 3 or 4 countries instead of 2): reuse should not happen, and the cache must not
  hurt. One task a kind, because the cache also learns from held-out tasks as they are accepted: a second task of
  a kind would rightly reuse the first.

Tasks are made by the generators of the main suites (``benchmarks/suites/generate.py``) over the same world, so
gold plans, gold answers and tools are those of ``make bench``; a task's kind is read from what was generated.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.suites.generate import chain_task, mixed_task, parallel_task

__all__ = ["KINDS", "SUITE_KINDS", "build_plan_cache_suites", "task_kind"]

OUT = Path(__file__).parent

KINDS: dict[str, Callable[[random.Random, dict[str, Any]], dict[str, Any]]] = {
    **{f"parallel-{op}-{k}": (lambda k: lambda rng, ents: parallel_task(rng, ents, k))(k)
       for op in ("total", "range") for k in (2, 3, 4, 5, 6)},
    "chain-founded": chain_task,
    "chain-density": chain_task,
    **{f"mixed-{n}": mixed_task for n in (2, 3, 4)},
}
"""Each kind's maker; a maker may draw another kind (the main generators pick a variant at random), so a draw is
kept only when ``task_kind`` says it is the kind wanted."""

SUITE_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], int, int]] = {
    "plan-cache": (("parallel-total-3", "parallel-total-4", "parallel-range-3", "parallel-range-4",
                    "chain-founded", "chain-density", "mixed-2", "mixed-3"),) * 2 + (3, 3),
    "plan-cache-shapes": (("parallel-total-3", "chain-founded", "mixed-2"),
                          ("parallel-total-2", "parallel-total-4", "parallel-total-5", "parallel-total-6",
                           "parallel-range-2", "parallel-range-3", "parallel-range-4", "parallel-range-5",
                           "parallel-range-6", "chain-density", "mixed-3", "mixed-4"), 4, 1),
}
"""Per suite: warm-up kinds, held-out kinds, tasks per warm-up kind, tasks per held-out kind."""


def task_kind(task: dict[str, Any]) -> str:
    """The kind of a generated task, read from its text and plan (not from how it was asked for)."""
    text, plan = task["task"], task["plan"]
    if text.startswith("What is the combined population"):
        return f"parallel-total-{len(plan) - 1}"
    if text.startswith("Among "):
        return f"parallel-range-{len(plan) - 1}"
    if "was founded" in text:
        return "chain-founded"
    if "density" in text:
        return "chain-density"
    if text.startswith("Look up the capitals of"):
        return f"mixed-{(len(plan) - 3) // 2}"
    raise ValueError(f"unknown task kind: {text!r}")


def _draw(kind: str, n: int, rng: random.Random, ents: dict[str, Any], taken: set[str]) -> list[dict[str, Any]]:
    """``n`` new tasks of ``kind`` whose texts are not in ``taken`` (which grows)."""
    out: list[dict[str, Any]] = []
    for _ in range(2000 * n):
        task = KINDS[kind](rng, ents)
        if task_kind(task) == kind and task["task"] not in taken:
            taken.add(task["task"])
            out.append(task)
            if len(out) == n:
                return out
    raise RuntimeError(f"only {len(out)} distinct {kind} tasks; widen the world")


def build_plan_cache_suites(world: dict[str, Any], seed: int = 23) -> dict[str, list[dict[str, Any]]]:
    """Every suite's tasks, ids ``<suite>-<split>-NNN``, each with its ``kind`` and ``split``."""
    ents = world["entities"]
    rng = random.Random(seed)
    taken: set[str] = set()
    suites: dict[str, list[dict[str, Any]]] = {}
    for suite, (warm_kinds, held_kinds, per_warm, per_held) in SUITE_KINDS.items():
        tasks: list[dict[str, Any]] = []
        for split, kinds, per in (("warmup", warm_kinds, per_warm), ("heldout", held_kinds, per_held)):
            drawn = [t | {"kind": kind, "split": split} for kind in kinds for t in _draw(kind, per, rng, ents, taken)]
            tasks += [t | {"id": f"{suite}-{split}-{i + 1:03d}"} for i, t in enumerate(drawn)]
        suites[suite] = tasks
    return suites


def main() -> None:
    world = json.loads((OUT / "world.json").read_text())
    descriptions = {line[2:].split(": ", 1)[0]: line[2:].split(": ", 1)[1] for line in
                    __doc__.split("\n\n")[2].replace("\n  ", " ").splitlines()}
    for name, tasks in build_plan_cache_suites(world).items():
        doc = {"suite": name, "description": descriptions[name], "tools": "world", "tasks": tasks}
        (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {name}.json ({len(tasks)} tasks)")


if __name__ == "__main__":
    main()
