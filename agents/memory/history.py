"""A conversation's earlier turns rendered for a prompt, within a token budget (pure: no I/O, no LLM).

The rule: the newest turns (up to ``verbatim_turns``) appear verbatim — question, answer and the step outputs
the answer relied on; older turns appear summarised (the question and the answer's first sentence, both
truncated); turns that no longer fit are counted, not shown. The whole text, header included, never exceeds
``budget_tokens`` as counted by the caller's ``count_tokens``. Answers and step outputs are fenced as untrusted
data (``prompts.fence``): they came from tools and from a model that read tool output.

Example:
    >>> turn = Turn("s1", 1, "Population of Paris?", "About 2.1 million (2023). Source: corpus.", "accepted",
    ...             "t1", (Evidence(1, "doc_search", "population of Paris", "Paris: 2.10 million"),))
    >>> text = history_context([turn], budget_tokens=200, count_tokens=lambda s: len(s.split()))
    >>> "Question: Population of Paris?" in text and "turn 1 step 1 doc_search" in text
    True
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from planning.models import Plan
from prompts.fence import fence_untrusted

__all__ = ["Evidence", "Turn", "TurnStatus", "compact_evidence", "history_context", "summarise_turn"]

TurnStatus = Literal["running", "accepted", "escalated", "clarify", "refused", "failed", "cancelled"]
"""A turn's task status (``TaskResult.status``), or "running" while its task has not finished."""

# A planner reads "step 1 calculator: 391" as a step of its own plan and writes $step_1_result for "that result"
# (the embedded 1.5B model did, through the repair round): earlier results are values to copy, named by turn.
HEADER = "Earlier turns, oldest first (copy values from them: $step_N_result names only the new plan's steps):"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True, slots=True)
class Evidence:
    """One step output an answer relied on, compacted for later prompts."""

    step_id: int
    tool: str | None
    description: str
    output: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One question of a session and what became of it."""

    session_id: str
    turn_no: int
    question: str
    answer: str | None
    status: TurnStatus
    task_id: str | None
    evidence: tuple[Evidence, ...] = ()
    created_at: float = 0.0


def _clip(text: str, max_chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def compact_evidence(plan: Plan | None, outputs: Mapping[int, Any], *, max_chars: int = 300,
                     max_steps: int = 8) -> tuple[Evidence, ...]:
    """The step outputs of a finished task, compacted: at most ``max_steps`` steps (tool steps first, then by
    id), each output as text of at most ``max_chars`` characters. ``outputs`` maps step id → output."""
    steps = {s.step_id: s for s in plan.steps} if plan is not None else {}
    order = sorted(outputs, key=lambda i: (steps[i].tool_name is None if i in steps else True, i))
    kept = []
    for step_id in order[:max_steps]:
        value = outputs[step_id]
        text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        step = steps.get(step_id)
        kept.append(Evidence(step_id, step.tool_name if step else None, _clip(step.description, 80) if step else "",
                             _clip(text, max_chars)))
    return tuple(sorted(kept, key=lambda e: e.step_id))


def _render_verbatim(turn: Turn) -> str:
    lines = [f"Answer: {turn.answer if turn.answer is not None else '(none)'}"]
    for ev in turn.evidence:
        label = f"turn {turn.turn_no} step {ev.step_id} {ev.tool or 'reasoning'}" + (f" ({ev.description})" if ev.description else "")
        lines.append(f"{label}: {ev.output}")
    data = fence_untrusted("\n".join(lines), f"turn {turn.turn_no} answer and step outputs")
    return f"Turn {turn.turn_no} ({turn.status}):\nQuestion: {turn.question}\n{data}"


def summarise_turn(turn: Turn, max_chars: int = 160) -> str:
    """Deterministic extractive summary: the question, and the answer's first sentence, each clipped."""
    answer = (turn.answer or "(no answer)").strip()
    first = _SENTENCE_END.split(answer, maxsplit=1)[0]
    return f"Turn {turn.turn_no} ({turn.status}): Q: {_clip(turn.question, max_chars)} A: {_clip(first, max_chars)}"


def _render(verbatim: Sequence[Turn], summaries: Sequence[Turn], omitted: int, summary_chars: int) -> str:
    parts = [HEADER]
    if omitted:
        parts.append(f"({omitted} earlier turn{'s' if omitted != 1 else ''} not shown)")
    if summaries:
        text = "\n".join(summarise_turn(t, summary_chars) for t in summaries)
        parts.append(fence_untrusted(text, "earlier turns, summarised"))
    parts.extend(_render_verbatim(t) for t in verbatim)
    return "\n\n".join(parts)


def history_context(turns: Sequence[Turn], budget_tokens: int, count_tokens: Callable[[str], int], *,
                    verbatim_turns: int = 3, summary_chars: int = 160) -> str:
    """The finished ``turns`` (in turn order) rendered within ``budget_tokens``; "" when there are none or
    not even the header fits. Greedy from the newest: verbatim while it fits (at most ``verbatim_turns``),
    then summaries while they fit; once a turn is summarised, every older turn is summarised or omitted."""
    done = sorted((t for t in turns if t.status != "running"), key=lambda t: t.turn_no)
    if not done or count_tokens(HEADER) > budget_tokens:
        return ""

    def fits(v: Sequence[Turn], s: Sequence[Turn], omitted: int) -> bool:
        return count_tokens(_render(v, s, omitted, summary_chars)) <= budget_tokens

    verbatim: list[Turn] = []
    summaries: list[Turn] = []
    remaining = list(done)
    while remaining and len(verbatim) < verbatim_turns and fits([remaining[-1], *verbatim], [], len(remaining) - 1):
        verbatim.insert(0, remaining.pop())
    while remaining and fits(verbatim, [remaining[-1], *summaries], len(remaining) - 1):
        summaries.insert(0, remaining.pop())
    if not fits(verbatim, summaries, len(remaining)):  # only the omission note itself can still overflow
        return ""
    return _render(verbatim, summaries, len(remaining), summary_chars)
