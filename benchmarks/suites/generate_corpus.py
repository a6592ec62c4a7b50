"""Build ``corpus.json``: an evaluation over the corpus tetrarch ships and its built-in tools (doc_search,
calculator), with gold answers read from the corpus by code.

    python -m benchmarks.suites.generate_corpus      # rewrites benchmarks/suites/corpus.json

Every figure comes from a ``Population:`` / ``Area:`` / ``Height:`` / ``Length:`` line of a corpus document
(the first figure of that line, the one the document leads with) and every capital from "its capital is X", so a
gold answer is traceable to the text. Tasks are of four kinds — look-ups, comparisons, arithmetic over looked-up
figures, multi-hop (a country's capital, then a figure of it) — written in several phrasings, and split into a
dev half (for prompt work) and a held-out half (reported once per change, never tuned on) by a seeded shuffle
within each kind. Deterministic: re-running it reproduces the committed file.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

SEED = 20
OUT = Path(__file__).parent / "corpus.json"
_FIELD = {"population": ("Population", r"(\d[\d,.]*)\s*million", 1e6),
          "area": ("Area", r"(\d[\d,.]*)\s*km²", 1.0),
          "height": ("Height", r"(\d[\d,.]*)\s*m\b", 1.0),
          "length": ("Length", r"(\d[\d,.]*)\s*km\b", 1.0)}
_UNIT = {"population": "people", "area": "km²", "height": "m", "length": "km"}


@dataclass(frozen=True)
class Entity:
    name: str
    kind: str
    facts: dict[str, float]


def load_entities() -> dict[str, Entity]:
    """Every corpus document's title, kind and lead figures; and country → capital."""
    found: dict[str, Entity] = {}
    for doc in sorted(resources.files("agents.tools.corpus").iterdir(), key=lambda p: p.name):
        if not doc.name.endswith(".md"):
            continue
        text = doc.read_text(encoding="utf-8")
        title = re.search(r"^title:\s*(.+)$", text, re.MULTILINE).group(1).strip()  # type: ignore[union-attr]
        kind = re.search(r"^kind:\s*(.+)$", text, re.MULTILINE).group(1).strip()  # type: ignore[union-attr]
        facts: dict[str, float] = {}
        for key, (label, pattern, scale) in _FIELD.items():
            line = re.search(rf"^{label}:(.*)$", text, re.MULTILINE)
            number = re.search(pattern, line.group(1)) if line else None
            if number:
                facts[key] = round(float(number.group(1).replace(",", "")) * scale, 6)
        capital = re.search(r"its capital is ([A-Z][\w .'-]+?)[.,;]", text)
        if capital:
            facts["capital"] = capital.group(1)  # type: ignore[assignment]
        found[title] = Entity(title, kind, facts)
    return found


def _search(i: int, query: str) -> dict[str, Any]:
    return {"step_id": i, "description": query, "tool_name": "doc_search", "tool_input": {"query": query},
            "depends_on": []}


def _calc(i: int, expression: str, deps: list[int], description: str) -> dict[str, Any]:
    return {"step_id": i, "description": description, "tool_name": "calculator",
            "tool_input": {"expression": expression}, "depends_on": deps}


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _pairs(entities: list[Entity], attr: str, rng: random.Random, n: int) -> list[tuple[Entity, Entity]]:
    pool = [e for e in entities if attr in e.facts]
    pairs = [(a, b) for i, a in enumerate(pool) for b in pool[i + 1:] if a.facts[attr] != b.facts[attr]]
    rng.shuffle(pairs)
    return pairs[:n]


def _the(e: Entity) -> str:
    """The name as a sentence uses it: "the Nile", "the Eiffel Tower", "the United Kingdom", "Mount Fuji"."""
    plural_or_union = e.name.startswith(("United ", "Netherlands"))
    return f"the {e.name}" if e.kind in ("river", "structure") or plural_or_union else e.name


def _what(attr: str, e: Entity) -> str:
    return f"{attr} of {_the(e)}"


class _Tasks(list[dict[str, Any]]):
    """The tasks built so far, in the order the seeded draws made them (the split depends on it)."""

    def add(self, kind: str, text: str, plan: list[dict[str, Any]], *, number: float | None = None,
            name: str | None = None, other: str | None = None, answer: str,
            figures: tuple[float, ...] = ()) -> None:
        task: dict[str, Any] = {"kind": kind, "task": text, "plan": plan, "answer": answer,
                                "react_turns": _react_turns(plan, figures)}
        if number is not None:
            task["answer_number"] = round(number, 6)
        if name is not None:
            task["answer_text"], task["wrong_text"] = name, other
        self.append(task)


def build() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    ents = list(load_entities().values())
    tasks = _Tasks()
    _lookups(tasks, ents, rng)
    _comparisons(tasks, ents, rng)
    _arithmetic(tasks, ents, rng)
    _multihop(tasks, ents)
    return _split(tasks)


def _lookups(tasks: _Tasks, ents: list[Entity], rng: random.Random) -> None:
    lookups: list[tuple[str, Callable[[Entity], str]]] = [
        ("population", lambda e: f"How many people lived in {e.name} according to the reference documents?"),
        ("height", lambda e: f"How tall is {_the(e)}, in metres?"),
        ("length", lambda e: f"How long is {_the(e)}, in km?"),
        ("area", lambda e: f"What area does {_the(e)} cover, in square kilometres?"),
    ]
    for attr, phrase in lookups:
        pool = [e for e in ents if attr in e.facts]
        for e in rng.sample(pool, min(4, len(pool))):
            tasks.add("lookup", phrase(e), [_search(1, _what(attr, e))], number=e.facts[attr],
                      answer=f"{_fmt(e.facts[attr])} {_UNIT[attr]}")


def _comparisons(tasks: _Tasks, ents: list[Entity], rng: random.Random) -> None:
    compare = {"population": ("Which has more inhabitants, {a} or {b}?", "Which city is more populous: {a} or {b}?"),
               "height": ("Which is taller, {a} or {b}?", "Which one rises higher, {a} or {b}?"),
               "length": ("Which river is longer, the {a} or the {b}?", "Is the {a} or the {b} the longer river?"),
               "area": ("Which covers the larger area, {a} or {b}?", "Which is bigger by area: {a} or {b}?")}
    for attr, phrases in compare.items():
        for j, (a, b) in enumerate(_pairs(ents, attr, rng, 4)):
            big = a if a.facts[attr] > b.facts[attr] else b
            small = b if big is a else a
            plan = [_search(1, _what(attr, a)), _search(2, _what(attr, b)),
                    _calc(3, "max({$step_1_result}, {$step_2_result})", [1, 2], "the larger figure")]
            tasks.add("comparison", phrases[j % 2].format(a=_the(a), b=_the(b)).replace("the the ", "the "), plan,
                      name=big.name, other=small.name, figures=(a.facts[attr], b.facts[attr]),
                      answer=f"{big.name} ({_fmt(big.facts[attr])} {_UNIT[attr]} against "
                             f"{_fmt(small.facts[attr])}).")


def _arithmetic(tasks: _Tasks, ents: list[Entity], rng: random.Random) -> None:
    arithmetic = [
        ("population", "How many more people live in the larger of {a} and {b}?", "diff"),
        ("height", "By how many metres is the taller of {a} and {b} higher than the other?", "diff"),
        ("length", "What is the combined length of the {a} and the {b}, in km?", "sum"),
        ("area", "How many times larger is the area of {a} than that of {b}? Give two decimals.", "ratio"),
        ("population", "What is the total population of {a} and {b}?", "sum"),
        ("height", "What percentage of the height of {b} is the height of {a}? Give one decimal.", "percent"),
    ]
    s1, s2 = "{$step_1_result}", "{$step_2_result}"
    for attr, phrase, op in arithmetic:
        for a, b in _pairs(ents, attr, rng, 3):
            x, y = a.facts[attr], b.facts[attr]
            expression, value = {
                "diff": (f"max({s1}, {s2}) - min({s1}, {s2})", abs(x - y)),
                "sum": (f"{s1} + {s2}", x + y),
                "ratio": (f"{s1} / {s2}", x / y),
                "percent": (f"{s1} / {s2} * 100", x / y * 100),
            }[op]
            plan = [_search(1, _what(attr, a)), _search(2, _what(attr, b)), _calc(3, expression, [1, 2], op)]
            tasks.add("arithmetic", phrase.format(a=_the(a), b=_the(b)).replace("the the ", "the "), plan,
                      number=value, answer=f"{_fmt(value)}", figures=(x, y))


def _multihop(tasks: _Tasks, ents: list[Entity]) -> None:
    by_name = {e.name: e for e in ents}
    countries = [e for e in ents if "capital" in e.facts and e.facts["capital"] in by_name]
    for c in countries:
        cap = by_name[str(c.facts["capital"])]
        for attr, phrase in (("population", "How many people live in the capital of {c}?"),
                             ("area", "What area does the capital city of {c} cover, in km²?")):
            if attr not in cap.facts:
                continue
            plan = [_search(1, f"capital of {_the(c)}"), _search(2, _what(attr, cap))]
            tasks.add("multihop", phrase.format(c=_the(c)), plan, number=cap.facts[attr],
                      answer=f"{cap.name}: {_fmt(cap.facts[attr])} {_UNIT[attr]}")


def _react_turns(plan: list[dict[str, Any]], figures: tuple[float, ...]) -> list[list[dict[str, Any]]]:
    """The gold ReAct trajectory (for the simulated model): the searches (together, or one by one when a search
    needs an earlier answer), then the calculation with the figures written in."""
    searches = [{"tool_name": s["tool_name"], "tool_input": dict(s["tool_input"])} for s in plan
                if s["tool_name"] == "doc_search"]
    turns = [searches] if not any(s["depends_on"] for s in plan if s["tool_name"] == "doc_search") else \
        [[c] for c in searches]
    calcs = [s for s in plan if s["tool_name"] == "calculator"]
    if calcs:
        expression = calcs[0]["tool_input"]["expression"]
        for i, value in enumerate(figures, start=1):
            expression = expression.replace(f"{{$step_{i}_result}}", repr(value))
        turns.append([{"tool_name": "calculator", "tool_input": {"expression": expression}}])
    return turns


def _split(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Within each kind, a seeded shuffle, then alternately dev / held-out; ids are stable per position."""
    rng = random.Random(SEED + 1)
    out = []
    for kind in ("lookup", "comparison", "arithmetic", "multihop"):
        group = [t for t in tasks if t["kind"] == kind]
        rng.shuffle(group)
        for i, task in enumerate(group):
            out.append({"id": f"corpus-{kind}-{i + 1:02d}", "split": "dev" if i % 2 == 0 else "heldout", **task})
    return out


def main() -> None:
    tasks = build()
    OUT.write_text(json.dumps({"name": "corpus", "tools": "builtin", "generated_by": "benchmarks/suites/"
                               "generate_corpus.py", "tasks": tasks}, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(tasks)} tasks to {OUT}")


if __name__ == "__main__":
    main()
