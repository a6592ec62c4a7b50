"""The generality suite's vocabulary: a task, its right answer, its wrong variants, and the dev/held-out split.

Every task carries what a correct model would do (the scripted plan in the planner's wire format, the right
answer) and what a fooled model would say instead (one wrong answer per class that applies). The split is a
stable hash of the task id, so adding tasks never moves an old one to the other half.

    >>> split_of("versions-en-0") in ("dev", "heldout")
    True
    >>> plan(call(1, "lookup", city="Paris"))["steps"][0]["tool_input"]
    {'city': 'Paris'}
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["SHAPES", "WRONG_CLASSES", "Expect", "GenTask", "Split", "WrongClass", "call", "plan", "split_of"]

WrongClass = Literal["wrong_entity", "wrong_sign", "unsupported_figure", "ratio_inverted", "item_left_out"]
WRONG_CLASSES: tuple[WrongClass, ...] = ("wrong_entity", "wrong_sign", "unsupported_figure", "ratio_inverted",
                                         "item_left_out")
Split = Literal["dev", "heldout"]
SHAPES = ("plain_numbers", "json_records", "sql_rows", "versions", "dates", "money", "percents", "units",
          "test_summaries", "diffs_code", "name_lists", "prose", "write_actions")
"""The tool-output shapes, one builder module entry each (``benchmarks.generality.shapes_*``)."""


@dataclass(frozen=True, slots=True)
class Expect:
    """What a right answer must contain, for scoring a real model's free text: every name in ``names``, each
    before any name in ``rivals`` (a rival may be mentioned after, as in "A, ahead of B"), and, when ``number`` is
    set, a figure within ``tolerance`` (relative) of it; ``sign`` (+1 / -1) when the question asks for a signed
    change, which the answer must not state the other way round."""

    number: float | None = None
    names: tuple[str, ...] = ()
    rivals: tuple[str, ...] = ()
    tolerance: float = 0.01
    sign: int = 0


@dataclass(frozen=True, slots=True)
class GenTask:
    """One task of the suite: the question, the user's tools it needs, the right plan and answer, and the wrong
    answers a fooled reviewer would accept (by class)."""

    id: str
    shape: str
    lang: str
    kind: str
    """What the question asks: difference, change, ratio, total, compare, count, list."""
    question: str
    tools: tuple[str, ...]
    plan: dict[str, Any]
    answer: str
    wrong: tuple[tuple[WrongClass, str], ...]
    expect: Expect = field(default_factory=Expect)

    @property
    def split(self) -> Split:
        return split_of(self.id)

    def wrong_answers(self) -> dict[WrongClass, str]:
        return dict(self.wrong)


def split_of(task_id: str) -> Split:
    """``dev`` or ``heldout`` from a stable hash of the id (not Python's salted ``hash``)."""
    return "dev" if hashlib.sha256(task_id.encode()).digest()[0] % 2 == 0 else "heldout"


def call(step_id: int, tool_name: str, deps: tuple[int, ...] = (), description: str = "",
         **tool_input: Any) -> dict[str, Any]:
    """One tool step of a plan in the planner's wire format."""
    return {"step_id": step_id, "description": description or f"{tool_name} {tool_input}", "tool_name": tool_name,
            "tool_input": tool_input, "depends_on": list(deps)}


def plan(*steps: dict[str, Any]) -> dict[str, Any]:
    """A wire-format plan (``{"steps": [...]}``) from ``call`` steps."""
    return {"steps": list(steps)}
