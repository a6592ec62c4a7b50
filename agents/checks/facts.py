"""What the built-in checks read and say: each step as a ``Result``, and a ``Fact`` about the task's results or
its answer, a ``CONTRADICTION`` (the policy turns an accept into a replan or a second review) or a ``NOTE`` (shown
to the reviewer only, in words it may reject). Also the few readings of a step every set shares.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["Fact", "Result", "Severity", "is_passage", "last_computed", "render_facts", "show", "subject",
           "text_of", "top_passage", "upstream"]


class Severity(Enum):
    CONTRADICTION = "contradiction"
    """The results or the answer cannot be right: an accept is turned into a replan."""
    NOTE = "note"
    """Shown to the reviewer only."""


@dataclass(frozen=True, slots=True)
class Fact:
    severity: Severity
    text: str


@dataclass(frozen=True, slots=True)
class Result:
    """One step as the checks see it: completed steps have an output, the others an error."""

    step_id: int
    tool_name: str | None
    description: str
    output: Any = None
    failed: bool = False
    about: str = ""
    """What the step looked up (its description and text arguments): which figure in its output is the one."""
    depends_on: tuple[int, ...] = ()
    """The steps whose outputs it used: a number computed from them is the figure an answer rests on."""
    arguments: str = ""
    """Its text arguments as the plan wrote them (a calculator's expression): the figures it typed in."""
    inputs: Any = None
    """Its arguments as planned, all of them (a write call's figures are stated there and nowhere else)."""


def render_facts(facts: Iterable[Fact]) -> str:
    """The facts as the reflector's prompt shows them: one line each, contradictions first. None: "no
    contradiction found" (what the checks looked for; "nothing found", shown under the default set's empty
    facts, read to the 1.5B reviewer as results that found nothing: it scored right answers completeness 1)."""
    ordered = sorted(facts, key=lambda f: f.severity is not Severity.CONTRADICTION)
    return "\n".join(f"- {'CONTRADICTION' if f.severity is Severity.CONTRADICTION else 'note'}: {f.text}"
                     for f in ordered) or "- no contradiction found"


def last_computed(results: Sequence[Result]) -> Result | None:
    """The last step that computed a number from earlier steps' outputs: the figure a final answer rests on."""
    computed = [r for r in results if not r.failed and r.tool_name is not None and r.depends_on
                and isinstance(r.output, (int, float)) and not isinstance(r.output, bool)]
    return computed[-1] if computed else None


def upstream(step: Result, results: Sequence[Result]) -> set[int]:
    """The steps ``step`` used, directly or through the steps it used."""
    deps = {r.step_id: r.depends_on for r in results}
    seen: set[int] = set()
    todo = list(step.depends_on)
    while todo:
        sid = todo.pop()
        if sid not in seen:
            seen.add(sid)
            todo.extend(deps.get(sid, ()))
    return seen


def is_passage(output: Any) -> bool:
    """Prose of a sentence or more (a document, a search's hits with their text), not a value and not records
    (JSON rows or SQL results hold fields, which no sentence names)."""
    text, _ = top_passage(output)
    return text is not None and len(re.findall(r"[^\W\d_]+", text)) >= 6


def top_passage(output: Any) -> tuple[str | None, str]:
    """(text, title) of what a step returned: a string itself, or the best (first) hit of a list of passages
    (its ``text``, ``content`` or ``snippet``; its ``title`` or ``doc_id``). No text: None."""
    first = output[0] if isinstance(output, list) and output else output
    if isinstance(first, str):
        return first, ""
    if isinstance(first, dict):
        text = first.get("text") or first.get("content") or first.get("snippet")
        title = first.get("title") or first.get("doc_id") or ""
        return (text if isinstance(text, str) else None), (title if isinstance(title, str) else "")
    return None, ""


def text_of(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, default=str, ensure_ascii=False)


def subject(result: Result) -> str:
    """What a step's figure is about, in the fewest words: its top passage's title ("Rome") when the output
    has one — a planner's description often names both things compared ("populations of Paris and Rome") —
    else what the step looked up."""
    output = result.output
    first = output[0] if isinstance(output, list) and output else output
    title = first.get("title") if isinstance(first, dict) else None
    return title if isinstance(title, str) and title.strip() else (result.about or result.description)


def show(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"
