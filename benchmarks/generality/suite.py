"""The generality suite: every shape's builder over every language, and its dev / held-out halves.

    >>> tasks = build_suite()
    >>> len(tasks) >= 200 and len({t.shape for t in tasks}) >= 12 and len({t.lang for t in tasks}) >= 4
    True
    >>> {t.split for t in select("heldout")} == {"heldout"}
    True
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from agents.tools import Tool
from agents.tools.builtins import calculator
from benchmarks.generality.locale import LANGS
from benchmarks.generality.model import SHAPES, GenTask
from benchmarks.generality.shapes_numeric import NUMERIC_SHAPES
from benchmarks.generality.shapes_text import TEXT_SHAPES
from benchmarks.generality.shapes_work import WORK_SHAPES
from benchmarks.generality.shapes_write import WRITE_SHAPES
from benchmarks.generality.tools import ALL_TOOLS

__all__ = ["BUILDERS", "SPLITS", "build_suite", "select", "suite_tools"]

BUILDERS: dict[str, Callable[[str], list[GenTask]]] = {**NUMERIC_SHAPES, **TEXT_SHAPES, **WORK_SHAPES,
                                                       **WRITE_SHAPES}
SPLITS = ("dev", "heldout", "all")


@cache
def build_suite() -> tuple[GenTask, ...]:
    """Every task, in shape then language order (deterministic: no randomness, no clock)."""
    return tuple(t for shape in SHAPES for lang in LANGS for t in BUILDERS[shape](lang))


def select(split: str = "all", limit: int | None = None) -> list[GenTask]:
    """The tasks of one half (``dev``, ``heldout``) or ``all``; ``limit`` takes an even spread over the half
    (every k-th task), so a short run still sees many shapes and languages."""
    if split not in SPLITS:
        raise ValueError(f"no split {split!r}; use one of {', '.join(SPLITS)}")
    tasks = [t for t in build_suite() if split == "all" or t.split == split]
    if limit is None or limit >= len(tasks):
        return tasks
    step = len(tasks) / limit
    return [tasks[int(i * step)] for i in range(limit)]


def suite_tools() -> list[Tool]:
    """Every tool a task of the suite may call: the user's tools and the built-in calculator."""
    return [*ALL_TOOLS, calculator]
