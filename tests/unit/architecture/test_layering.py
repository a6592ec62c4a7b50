"""The layers hold: the import table in docs/architecture.md is what the code does, and there are no cycles.

The table is read from the document (its "package | may import" table and the list of known exceptions under it),
so the document and the code cannot drift apart: an import the table does not allow fails here, naming the line
to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.import_graph import cycles, import_edges

DOC = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"
EVERYONE = "agents.errors"
"""Every ``agents`` package may import the error types (the document says so under the table)."""


@dataclass
class Rule:
    allowed: set[str] = field(default_factory=set)
    lazily: set[str] = field(default_factory=set)
    """Allowed only inside a function (importing the package must not import these)."""
    everything: bool = False


def _names(cell: str) -> list[str]:
    return re.findall(r"`([\w.]+)`", cell)


def read_table(text: str) -> tuple[dict[str, Rule], set[tuple[str, str]]]:
    """The rules (row name → what it may import) and the known exceptions (importer prefix, imported prefix)."""
    rules: dict[str, Rule] = {}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\|\s*package\s*\|\s*may import", line))
    i = start + 2
    while i < len(lines) and lines[i].startswith("|"):
        _, who, may, *_ = lines[i].split("|")
        rule = Rule(everything="everything" in may)
        for part in may.split(","):
            for name in _names(part):
                (rule.lazily if "lazily" in part else rule.allowed).add(name)
        for name in _names(who):
            rules[name] = rule
        i += 1
    exceptions = set()
    for line in lines[i:]:
        match = re.match(r"- Known exception: `([\w.]+)` imports `([\w.]+)`", line)
        if match:
            exceptions.add((match[1], match[2]))
        elif line.startswith("#"):
            break
    return rules, exceptions


def _within(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


def _row(module: str, rules: dict[str, Rule]) -> str | None:
    matches = [name for name in rules if _within(module, name)]
    return max(matches, key=len) if matches else None


def breaches(text: str, edges: list[tuple[str, str, bool]]) -> list[str]:
    """Every import the table does not allow, as a sentence naming the module, the import and the row."""
    rules, exceptions = read_table(text)
    found = []
    for module, target, lazy in edges:
        row = _row(module, rules)
        if row is None:
            if module.split(".")[0] == "agents" and module != "agents":
                found.append(f"{module} is in no row of the table: add its package")
            continue
        rule = rules[row]
        target_row = _row(target, rules)
        same_row = target_row is not None and rules[target_row] is rule
        if rule.everything or same_row or (target.startswith("agents") and _within(target, EVERYONE)):
            continue
        if any(_within(target, a) for a in rule.allowed) or (lazy and any(_within(target, a) for a in rule.lazily)):
            continue
        if any(_within(module, m) and _within(target, t) for m, t in exceptions):
            continue
        how = "at import time (the table allows it only lazily)" if any(_within(target, a) for a in rule.lazily) \
            else "(not in its row)"
        if target.split(".")[0] in ("dag", "planning", "prompts", "agents", "benchmarks") or target == "ray":
            found.append(f"{module} imports {target} {how}; row `{row}` of docs/architecture.md")
    return sorted(set(found))


def test_the_code_imports_only_what_the_architecture_table_allows():
    assert breaches(DOC.read_text(encoding="utf-8"), list(import_edges())) == []


def test_a_deliberate_breach_is_caught():
    text = DOC.read_text(encoding="utf-8")
    assert breaches(text, [("planning.policy", "agents.engine.task_runner", False)]) == [
        "planning.policy imports agents.engine.task_runner (not in its row); row `planning` of docs/architecture.md"]
    assert breaches(text, [("agents.roles.router", "ray", False)]) != []
    assert breaches(text, [("agents.api", "agents.cluster.driver", False)]) != []  # only lazily
    assert breaches(text, [("agents.api", "agents.cluster.driver", True)]) == []


def test_no_import_cycles():
    assert cycles() == []
