"""Compact step results for the reflector and a replanning planner: one line a step, all of it fenced once.

The verbose rendering (``agents/_render.py``) opens a fence and a header per step; for a 7-step plan that is
~40% of the reflector's input. Here each step is one line (``#3 calculator ok → 42``), newlines inside an
output are folded so data cannot start a fake line, and the whole block is one untrusted-data fence::

    >>> print(render_results_compact([StepLine(1, "lookup", "completed", {"city": "Rome"}),
    ...                               StepLine(2, "lookup", "failed", error="no entity 'Rmoe'")]))
    <untrusted-data source="step results">
    #1 lookup ok → {"city": "Rome"}
    #2 lookup failed: no entity 'Rmoe'
    </untrusted-data>

Search hits show their texts alone (ids and scores are noise)::

    >>> print(render_results_compact([StepLine(1, "doc_search", "completed",
    ...                                         [{"doc_id": "rome", "title": "Rome", "text": "Rome had 2.75 million.",
    ...                                           "score": 7.0}])]))
    <untrusted-data source="step results">
    #1 doc_search ok → Rome had 2.75 million.
    </untrusted-data>

With ``calls`` (step id → the arguments as the plan wrote them) each line also says what the step was asked, so a
reader needs no separate plan (the lean reflector, reflector/v11)::

    >>> print(render_results_compact([StepLine(1, "lookup", "completed", 2.8)], calls={1: '("Rome", "pop")'}))
    <untrusted-data source="step results">
    #1 lookup ok ("Rome", "pop") → 2.8
    </untrusted-data>
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from prompts.fence import fence_untrusted

__all__ = ["StepLine", "StepResult", "render_results_compact", "titled"]

_STATUS = {"completed": "ok"}


class StepResult(Protocol):
    """What is read of a step (``agents.role_types.StepView`` has these attributes)."""

    @property
    def step_id(self) -> int: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def output(self) -> Any: ...
    @property
    def error(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class StepLine:
    """A plain ``StepResult`` (tests, the simulated model, callers without a StepView)."""

    step_id: int
    tool_name: str | None
    status: str
    output: Any = None
    error: str | None = None


def _passages(value: Any) -> str | None:
    """Search hits (``[{"title": ..., "text": ...}, ...]``) as their texts alone: ids and scores are noise to a
    reader and cost a small model's prefill (~15 tokens a hit)."""
    if not isinstance(value, list) or not value or not all(isinstance(h, dict) and isinstance(h.get("text"), str)
                                                            for h in value):
        return None
    return " | ".join(titled(hit["text"], hit.get("title")) for hit in value)


def titled(text: str, title: Any) -> str:
    """A passage as a reader needs it: prefixed with its title unless it already starts with it.

    >>> titled("Population: 2.75 million.", "Rome"), titled("Rome: Population: 2.75 million.", "Rome")
    ('Rome: Population: 2.75 million.', 'Rome: Population: 2.75 million.')
    """
    return f"{title}: {text}" if isinstance(title, str) and title and not text.startswith(title) else text


def _one_line(value: Any, max_chars: int | None) -> str:
    text = value if isinstance(value, str) else _passages(value) or json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    if max_chars is not None and len(text) > max_chars:
        text = f"{text[:max_chars]}…({len(text) - max_chars} chars cut)"
    return text


def render_results_compact(results: Iterable[StepResult], *, max_chars: int | None = None,
                           calls: Mapping[int, str] | None = None) -> str:
    """One line a step inside one fence; ``max_chars`` caps each output or error (None: no cap — tool
    outputs are already capped by ``ToolPolicy.max_output_tokens``). ``calls``: step id → its arguments, written after
    the status (``#1 lookup ok ("Rome") → 2.8``), inside the fence like everything else on the line (they may
    quote earlier data). The tool name and status come first either way, so a line reads alike with or without."""
    lines = []
    for r in results:
        call = (calls or {}).get(r.step_id)
        args = f" {_one_line(call, max_chars)}" if call else ""
        head = f"#{r.step_id} {r.tool_name or 'think'} {_STATUS.get(r.status, r.status)}{args}"
        if r.status == "completed":
            lines.append(f"{head} → {_one_line(r.output, max_chars)}")
        elif r.error:
            lines.append(f"{head}: {_one_line(r.error, max_chars)}")
        else:
            lines.append(head)
    return fence_untrusted("\n".join(lines), "step results") if lines else "(no steps ran)"
