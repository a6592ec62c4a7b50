"""Plan diagrams as text: Mermaid (for Markdown) and Graphviz DOT, optionally coloured by step state.

``steps`` are duck-typed: anything with ``.step_id``, ``.description``, ``.tool_name`` and ``.depends_on``
(``planning.models.PlanStep`` for instance). ``states`` maps step ids to a state name ("completed", ...) or a
``StepState``. A dependency on a step that is not in ``steps`` is drawn as a dashed "missing" node, because
that is exactly what someone debugging a broken plan needs to see.

Example:
    >>> from types import SimpleNamespace as S
    >>> steps = [S(step_id=1, description="find", tool_name="search", depends_on=[]),
    ...          S(step_id=2, description="sum up", tool_name=None, depends_on=[1])]
    >>> print(to_mermaid(steps))
    flowchart TD
        s1["1. find<br/>tool: search"]
        s2["2. sum up<br/>reasoning (LLM)"]
        s1 --> s2
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

__all__ = ["STATE_COLOURS", "StepLike", "to_dot", "to_mermaid"]

_MAX_DESCRIPTION = 80

STATE_COLOURS: Mapping[str, tuple[str, str]] = {
    # state: (fill, stroke)
    "pending": ("#f1f3f5", "#868e96"),
    "running": ("#d0ebff", "#1c7ed6"),
    "completed": ("#d3f9d8", "#2b8a3e"),
    "failed": ("#ffe3e3", "#c92a2a"),
    "skipped": ("#f8f9fa", "#adb5bd"),
    "cancelled": ("#fff4e6", "#e8590c"),
}
_MISSING = ("#ffffff", "#c92a2a")


class StepLike(Protocol):
    step_id: int
    description: str
    tool_name: str | None
    depends_on: Iterable[int]


def _state_name(state: Any) -> str:
    return str(state.value if isinstance(state, enum.Enum) else state).lower()


def _label_lines(step: StepLike) -> tuple[str, str]:
    text = " ".join(str(step.description).split())  # newlines and runs of blanks become single spaces
    if len(text) > _MAX_DESCRIPTION:
        text = text[: _MAX_DESCRIPTION - 1] + "…"
    tool = f"tool: {step.tool_name}" if step.tool_name else "reasoning (LLM)"
    return f"{step.step_id}. {text}".rstrip(), tool


def _graph(steps: Iterable[StepLike]) -> tuple[list[StepLike], list[tuple[int, int]], list[int]]:
    ordered = sorted(steps, key=lambda s: s.step_id)
    known = {s.step_id for s in ordered}
    edges = [(d, s.step_id) for s in ordered for d in sorted(set(s.depends_on))]
    missing = sorted({d for d, _ in edges} - known)
    return ordered, edges, missing


def _mermaid_text(text: str) -> str:
    # Mermaid's entity codes: a raw quote ends the label, and & < > would be read as HTML. "#" goes first so
    # a literal "#quot;" in the text stays literal.
    text = text.replace("#", "#35;").replace("&", "#38;")
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def to_mermaid(steps: Iterable[StepLike], states: Mapping[int, Any] | None = None) -> str:
    """A Mermaid ``flowchart TD``; with ``states``, nodes get one class per state (colours: STATE_COLOURS)."""
    ordered, edges, missing = _graph(steps)
    lines = ["flowchart TD"]
    for s in ordered:
        title, tool = _label_lines(s)
        lines.append(f'    s{s.step_id}["{_mermaid_text(title)}<br/>{_mermaid_text(tool)}"]')
    for m in missing:
        lines.append(f'    s{m}["{m}. missing step"]')
    lines.extend(f"    s{d} --> s{t}" for d, t in edges)
    by_state: dict[str, list[int]] = {}
    for sid, state in sorted((states or {}).items()):
        name = _state_name(state)
        if name in STATE_COLOURS:
            by_state.setdefault(name, []).append(sid)
    for name in STATE_COLOURS:
        if name in by_state:
            fill, stroke = STATE_COLOURS[name]
            lines.append(f"    classDef {name} fill:{fill},stroke:{stroke}")
            lines.append(f"    class {','.join(f's{i}' for i in by_state[name])} {name}")
    if missing:
        lines.append(f"    classDef missing fill:{_MISSING[0]},stroke:{_MISSING[1]},stroke-dasharray:4 3")
        lines.append(f"    class {','.join(f's{i}' for i in missing)} missing")
    return "\n".join(lines)


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(steps: Iterable[StepLike], states: Mapping[int, Any] | None = None) -> str:
    """A Graphviz ``digraph``; with ``states``, nodes are filled with their state's colour."""
    ordered, edges, missing = _graph(steps)
    lines = ["digraph plan {", "    rankdir=TB;",
             '    node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];']
    for s in ordered:
        title, tool = _label_lines(s)
        colour = ""
        name = _state_name((states or {}).get(s.step_id, ""))
        if name in STATE_COLOURS:
            fill, stroke = STATE_COLOURS[name]
            colour = f', fillcolor="{fill}", color="{stroke}"'
        lines.append(f'    s{s.step_id} [label="{_dot_text(title)}\\n{_dot_text(tool)}"{colour}];')
    for m in missing:
        lines.append(f'    s{m} [label="{m}. missing step", style="rounded,dashed", color="{_MISSING[1]}"];')
    lines.extend(f"    s{d} -> s{t};" for d, t in edges)
    lines.append("}")
    return "\n".join(lines)
