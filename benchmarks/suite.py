"""Loading suites and checking answers."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, assert_never

from pydantic import BaseModel

from agents.checks.numbers import numbers_in
from agents.llm.simulated import GoldTask

__all__ = ["PLAN_CACHE_SUITES", "REAL_MODEL_SUITES", "SPLITS", "SUITES", "SUITE_DIR", "SYSTEMS", "TOOL_CALLING", "MEASURED_BEFORE_MODES", "BenchTask", "answer_matches",
           "AnswerKind", "NamedNumber", "answer_kind", "expected_output", "final_output_correct", "output_correct",
           "output_type_for", "load_suite", "suite_tools_kind", "task_correct", "text_matches"]

SUITE_DIR = Path(__file__).parent / "suites"
SUITES = ("parallel", "chain", "mixed", "repair")
"""The simulated-world suites (``make bench``)."""
REAL_MODEL_SUITES = ("corpus",)
"""Suites over the shipped corpus and built-in tools (doc_search, calculator), with gold answers read from the
corpus (``benchmarks/suites/generate_corpus.py``): accuracy on a real model. Split into dev and held-out halves."""
PLAN_CACHE_SUITES = ("plan-cache", "plan-cache-shapes")
"""The plan-cache benchmark's suites (``benchmarks/suites/generate_plan_cache.py``): a warm-up half the cache learns
from and a held-out half of other tasks it is measured on (``python -m benchmarks.memory.plan_cache``)."""
SPLITS = ("all", "dev", "heldout", "warmup")
SYSTEMS = ("tetrarch", "react", "react_parallel", "react_json", "react_parallel_json")
"""What a suite compares, side by side: plan-then-execute, ReAct and ReAct with parallel tool calls as users run them
(native function calling), and the same two writing their calls as JSON in the text (the form measured before)."""
TOOL_CALLING: dict[str, str] = {"tetrarch": "plan", "react": "native", "react_parallel": "native",
                                "react_json": "json", "react_parallel_json": "json"}
"""How each system's model calls tools: ``plan`` (tetrarch: the planner writes the DAG of calls as text), ``native``
(``tools`` in the request, ``tool_calls`` in the reply) or ``json`` (a JSON object in the reply text)."""
MEASURED_BEFORE_MODES: dict[str, str] = {"tetrarch": "plan", "react": "json", "react_parallel": "json"}
"""The modes of results written before reports recorded them: the ReAct baselines wrote JSON in the text then."""


@dataclass(frozen=True, slots=True)
class BenchTask:
    id: str
    gold: GoldTask
    answer_number: float | None
    answer_text: str | None = None
    """For a comparison: the entity the answer must name first (before ``wrong_text``)."""
    wrong_text: str | None = None
    kind: str = ""
    split: str = ""

    @property
    def text(self) -> str:
        return self.gold.task


def load_suite(name: str, limit: int | None = None, split: str = "all") -> list[BenchTask]:
    """The suite's tasks (``split``: dev, heldout or all), at most ``limit`` of them taken round-robin over the
    task kinds, so a short run still covers every kind."""
    path = SUITE_DIR / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(
            f"no suite {name!r}; available: {', '.join(SUITES + REAL_MODEL_SUITES + PLAN_CACHE_SUITES)}")
    if split not in SPLITS:
        raise ValueError(f"no split {split!r}; use one of {', '.join(SPLITS)}")
    doc = json.loads(path.read_text())
    tasks = []
    for raw in doc["tasks"]:
        if split != "all" and raw.get("split") != split:
            continue
        kept = ("task", "plan", "first_plan", "replan_feedback", "answer", "answer_number", "react_turns")
        fields = {k: raw[k] for k in kept if k in raw}
        tasks.append(BenchTask(raw["id"], GoldTask(**fields), raw.get("answer_number"), raw.get("answer_text"),
                               raw.get("wrong_text"), raw.get("kind", ""), raw.get("split", "")))
    return _round_robin(tasks)[:limit]


def suite_tools_kind(name: str) -> str:
    """``world`` (the simulated knowledge base) or ``builtin`` (doc_search and calculator over the corpus)."""
    return json.loads((SUITE_DIR / f"{name}.json").read_text()).get("tools", "world")


def _round_robin(tasks: list[BenchTask]) -> list[BenchTask]:
    kinds: dict[str, list[BenchTask]] = {}
    for t in tasks:
        kinds.setdefault(t.kind, []).append(t)
    if len(kinds) <= 1:
        return tasks
    out: list[BenchTask] = []
    for i in range(max(len(v) for v in kinds.values())):
        out += [v[i] for v in kinds.values() if i < len(v)]
    return out


def answer_matches(answer: str | None, expected: float | None, rel_tol: float = 0.01) -> bool | None:
    """True when some number in the answer is within rel_tol of the gold number (None: nothing to check).
    A number with a scale word counts either way ("0.65 million" matches 650000 and 0.65)."""
    if expected is None:
        return None
    if not answer:
        return False
    for value in numbers_in(answer):
        if abs(value - expected) <= max(rel_tol * abs(expected), 0.01):
            return True
    return False


def text_matches(answer: str | None, right: str | None, wrong: str | None) -> bool | None:
    """A comparison's answer is right when it names ``right`` and names it before ``wrong`` (case and accents
    ignored): "Rome, with 2.75 million" is right, "Paris has fewer people than Rome" is counted wrong (a
    documented false negative: answers lead with the one asked for)."""
    if right is None:
        return None
    text = _fold(answer or "")
    at_right = text.find(_fold(right))
    at_wrong = text.find(_fold(wrong)) if wrong else -1
    return at_right >= 0 and (at_wrong < 0 or at_right < at_wrong)


def task_correct(task: BenchTask, answer: str | None) -> bool | None:
    """The task's verdict: its number and/or its named entity must be right (None: the task has no gold)."""
    verdicts = [v for v in (answer_matches(answer, task.answer_number),
                            text_matches(answer, task.answer_text, task.wrong_text)) if v is not None]
    return all(verdicts) if verdicts else None


def final_output_correct(task: BenchTask, status: str, outputs: list[object]) -> bool | None:
    """The verdict on what the plan computed, not on what a model wrote about it: an accepted task whose final
    steps' outputs (``outputs``: the steps no other step uses) include the gold number. With the simulated LLM
    this is the only honest check (its answer is the gold text whatever the steps returned): a plan filled with a
    wrong value computes a wrong number and is counted wrong. None: the task has no gold number."""
    if task.answer_number is None:
        return None
    return status == "accepted" and any(answer_matches(str(o), task.answer_number) for o in outputs)


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


class NamedNumber(BaseModel):
    """A typed answer that names an entity and gives its figure (a task with both a gold name and number)."""

    name: str
    value: float


AnswerKind = Literal["number", "name", "named_number"]


def answer_kind(task: BenchTask) -> AnswerKind:
    """What a typed answer to ``task`` holds: what its grader checks (the gold number, the gold name, or both)."""
    if task.answer_number is not None and task.answer_text is not None:
        return "named_number"
    if task.answer_number is not None:
        return "number"
    if task.answer_text is not None:
        return "name"
    raise ValueError(f"task {task.id} has no gold answer to type")


def output_type_for(task: BenchTask) -> Any:
    """The ``output_type`` a typed run (``tetrarch bench --typed``) gives ``task``: by its answer kind alone."""
    kind = answer_kind(task)
    match kind:
        case "number":
            return float
        case "name":
            return str
        case "named_number":
            return NamedNumber
        case _:
            assert_never(kind)


def expected_output(task: BenchTask) -> Any:
    """The gold answer as a value of ``output_type_for(task)``."""
    kind = answer_kind(task)
    match kind:
        case "number":
            return task.answer_number
        case "name":
            return task.answer_text
        case "named_number":
            return NamedNumber(name=task.answer_text or "", value=task.answer_number or 0.0)
        case _:
            assert_never(kind)


def _number_right(value: Any, expected: float | None, rel_tol: float = 0.01) -> bool:
    if expected is None or isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value - expected) <= max(rel_tol * abs(expected), 0.01)  # answer_matches' tolerance


def output_correct(task: BenchTask, output: Any) -> bool:
    """A typed run's verdict, as ``task_correct`` judges text: the number within the same tolerance (a bare
    figure: no scale word to read), the name by ``text_matches`` (case and accents ignored, before the rival)."""
    if output is None:
        return False
    kind = answer_kind(task)
    match kind:
        case "number":
            return _number_right(output, task.answer_number)
        case "name":
            return isinstance(output, str) and bool(text_matches(output, task.answer_text, task.wrong_text))
        case "named_number":
            return (isinstance(output, NamedNumber) and _number_right(output.value, task.answer_number)
                    and bool(text_matches(output.name, task.answer_text, task.wrong_text)))
        case _:
            assert_never(kind)
