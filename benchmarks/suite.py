"""Loading suites and checking answers."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from agents.llm.simulated import GoldTask

__all__ = ["SUITES", "SUITE_DIR", "BenchTask", "load_suite", "answer_matches"]

SUITE_DIR = Path(__file__).parent / "suites"
SUITES = ("parallel", "chain", "mixed", "repair")


@dataclass(frozen=True, slots=True)
class BenchTask:
    id: str
    gold: GoldTask
    answer_number: float | None

    @property
    def text(self) -> str:
        return self.gold.task


def load_suite(name: str, limit: int | None = None) -> list[BenchTask]:
    path = SUITE_DIR / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no suite {name!r}; available: {', '.join(SUITES)}")
    doc = json.loads(path.read_text())
    tasks = []
    for raw in doc["tasks"][:limit]:
        fields = {k: raw[k] for k in ("task", "plan", "first_plan", "replan_feedback", "answer", "react_turns")
                  if k in raw}
        tasks.append(BenchTask(raw["id"], GoldTask(**fields), raw.get("answer_number")))
    return tasks


_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:\.\d+)?")


def answer_matches(answer: str | None, expected: float | None, rel_tol: float = 0.01) -> bool | None:
    """True when some number in the answer is within rel_tol of the gold number (None: nothing to check)."""
    if expected is None:
        return None
    if not answer:
        return False
    for token in _NUMBER.findall(answer):
        try:
            value = float(token.replace(",", ""))
        except ValueError:
            continue
        if abs(value - expected) <= max(rel_tol * abs(expected), 0.01):
            return True
    return False
