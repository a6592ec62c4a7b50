"""The value tree of a plan template: a plan's JSON values with literal occurrences lifted into slot numbers.

Lifting is lossless by construction: a ``TText``'s parts, joined with each slot's original text, give back
the original string; a ``TNum`` is lifted only when its literal's text parses back to the same number of the
same JSON type. ``$step_N_result`` references are never touched, so a number slot "1" cannot corrupt
``{$step_1_result}``.

Example:
    >>> from agents.memory.literals import extract_literals
    >>> lits = list(extract_literals("Add 3 to Rome"))  # "Add", "3", "Rome"
    >>> build({"q": "Rome plus {$step_3_result}", "n": 3}, lits, set())
    TDict(items=(('q', TText(parts=(2, ' plus {$step_3_result}'))), ('n', TNum(slot=1, as_int=True))))
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.memory.literals import TaskLiteral, parse_number

__all__ = ["Node", "StepTemplate", "TConst", "TDict", "TList", "TNum", "TText", "build", "node_from_json",
           "node_to_json", "render_node", "spelled_elsewhere"]

_REF = re.compile(r"\{\$step_\d+_result[\w.]*\}|\$\{step_\d+_result[\w.]*\}|\$step_\d+_result[\w.]*")


@dataclass(frozen=True, slots=True)
class TConst:
    value: Any


@dataclass(frozen=True, slots=True)
class TText:
    parts: tuple[str | int, ...]
    """Text, and slot numbers where a literal stood."""


@dataclass(frozen=True, slots=True)
class TNum:
    slot: int
    as_int: bool


@dataclass(frozen=True, slots=True)
class TList:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class TDict:
    items: tuple[tuple[str, Node], ...]


Node = TConst | TText | TNum | TList | TDict


@dataclass(frozen=True, slots=True)
class StepTemplate:
    step_id: int
    description: Node
    tool_name: str | None
    tool_input: Node
    depends_on: tuple[int, ...]


def _boundary(lit: TaskLiteral) -> str:
    text = re.escape(lit.text)
    if lit.kind == "number":  # "3" is not inside "3.5", "13" or "1,300"
        return rf"(?<![\w.,-]){text}(?![\w]|[.,]\d)"
    return rf"(?<!\w){text}(?!\w)"


@functools.lru_cache(maxsize=256)
def _pattern(lits: tuple[TaskLiteral, ...]) -> re.Pattern[str]:
    # Longest first: at one position, "New York City" wins over "New York".
    order = sorted(range(len(lits)), key=lambda i: (-len(lits[i].text), i))
    return re.compile("|".join(f"(?P<s{i}>{_boundary(lits[i])})" for i in order))


def _lift_text(text: str, lits: Sequence[TaskLiteral], used: set[int]) -> Node:
    if not lits:
        return TConst(text)
    pattern = _pattern(tuple(lits))
    parts: list[str | int] = []
    last = 0

    def add_text(piece: str) -> None:
        if piece:
            if parts and isinstance(parts[-1], str):
                parts[-1] += piece
            else:
                parts.append(piece)

    for segment_start, segment_end, is_ref in _segments(text):
        if is_ref:
            continue
        for m in pattern.finditer(text, segment_start, segment_end):
            slot = int(m.lastgroup[1:])  # type: ignore[index]
            add_text(text[last:m.start()])
            parts.append(slot)
            used.add(slot)
            last = m.end()
    add_text(text[last:])
    return TText(tuple(parts)) if any(isinstance(p, int) for p in parts) else TConst(text)


def _segments(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_reference) pieces covering ``text``."""
    pieces, last = [], 0
    for m in _REF.finditer(text):
        pieces += [(last, m.start(), False), (m.start(), m.end(), True)]
        last = m.end()
    pieces.append((last, len(text), False))
    return pieces


def build(value: Any, lits: Sequence[TaskLiteral], used: set[int]) -> Node:
    """``value`` with occurrences of ``lits`` lifted (slot i is ``lits[i]``); adds the slots used to ``used``."""
    if isinstance(value, str):
        return _lift_text(value, lits, used)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for i, lit in enumerate(lits):
            as_int = isinstance(value, int)
            parsed = parse_number(lit.text, as_int) if lit.kind == "number" else None
            if parsed is not None and type(parsed) is type(value) and parsed == value:
                used.add(i)
                return TNum(i, as_int)
        return TConst(value)
    if isinstance(value, list):
        items = tuple(build(v, lits, used) for v in value)
        return TList(items) if any(not isinstance(i, TConst) for i in items) else TConst(value)
    if isinstance(value, dict):
        pairs = tuple((k, build(v, lits, used)) for k, v in value.items())
        return TDict(pairs) if any(not isinstance(n, TConst) for _, n in pairs) else TConst(value)
    return TConst(value)


def _constant_texts(node: Node) -> list[Any]:
    match node:
        case TConst(value) if isinstance(value, (list, dict)):
            items = value if isinstance(value, list) else list(value.values())
            return [x for item in items for x in _constant_texts(TConst(item))]
        case TConst(value):
            return [value]
        case TText(parts):
            return [p for p in parts if isinstance(p, str)]
        case TList(items):
            return [x for item in items for x in _constant_texts(item)]
        case TDict(items):
            return [x for _, item in items for x in _constant_texts(item)]
    return []


def spelled_elsewhere(steps: Sequence[StepTemplate], lits: Sequence[TaskLiteral]) -> str | None:
    """Where a slot's value still appears in the template's constant parts in another spelling (other case,
    digits without separators, the same number as a JSON value of another type), or None. Code must not fill
    such a template with new values: the old value would survive beside the new one."""
    constants = [c for s in steps for node in (s.description, s.tool_input) for c in _constant_texts(node)]
    for lit in lits:
        forms = {lit.text.casefold(), lit.text.replace(",", "").casefold()}
        pattern = re.compile("|".join(_boundary(TaskLiteral(lit.kind, f, 0, 0)) for f in forms), re.IGNORECASE)
        for value in constants:
            if isinstance(value, str):
                found = pattern.search(_REF.sub(" ", value))
                if found:
                    return f"{lit.text!r} (as {found.group()!r})"
            elif (lit.kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool)
                  and parse_number(lit.text, False) == value):
                return f"{lit.text!r} (as the JSON value {value!r})"
    return None


def render_node(node: Node, names: Sequence[str]) -> str:
    """Compact JSON-like text of a node with slots shown by name (for the planner)."""
    match node:
        case TConst(value):
            return json.dumps(value, ensure_ascii=False, default=str)
        case TText(parts):
            return json.dumps("".join(names[p] if isinstance(p, int) else p for p in parts), ensure_ascii=False)
        case TNum(slot, _):
            return names[slot]
        case TList(items):
            return "[" + ", ".join(render_node(i, names) for i in items) + "]"
        case TDict(items):
            return "{" + ", ".join(f"{json.dumps(k)}: {render_node(v, names)}" for k, v in items) + "}"
    raise TypeError(f"not a template node: {node!r}")  # pragma: no cover - closed set


def node_to_json(node: Node) -> Any:
    match node:
        case TConst(value):
            return {"c": value}
        case TText(parts):
            return {"t": list(parts)}
        case TNum(slot, as_int):
            return {"n": slot, "i": as_int}
        case TList(items):
            return {"l": [node_to_json(i) for i in items]}
        case TDict(items):
            return {"d": [[k, node_to_json(v)] for k, v in items]}
    raise TypeError(f"not a template node: {node!r}")  # pragma: no cover - closed set


def node_from_json(data: dict[str, Any]) -> Node:
    if "c" in data:
        return TConst(data["c"])
    if "t" in data:
        return TText(tuple(data["t"]))
    if "n" in data:
        return TNum(int(data["n"]), bool(data["i"]))
    if "l" in data:
        return TList(tuple(node_from_json(i) for i in data["l"]))
    if "d" in data:
        return TDict(tuple((k, node_from_json(v)) for k, v in data["d"]))
    raise ValueError(f"not a stored template node: {data!r}")
