"""The end-to-end report, ONE pair of files: ``generality-e2e.json`` holds the latest run (every answer) and the
dated history of every run before it; ``generality-e2e.md`` is rendered from the JSON alone (``render``), so the two
cannot drift (a test renders the committed JSON and compares).

A ``--llm local`` run replaces the latest run and adds its history row, keyed by the minute it started and its
label: saved after every task, a run updates its own row, and a run cut short keeps what it measured.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

__all__ = ["BASELINES", "HALF_NAMES", "JSON_KEYS", "KINDS", "REPORT", "history_row", "render", "updated",
           "write_report"]

REPORT = "generality-e2e"
BASELINES = ("react", "react_parallel")
Kind = Literal["end to end", "reviewer alone", "planner alone"]
KINDS: tuple[Kind, ...] = ("end to end", "reviewer alone", "planner alone")
HALF_NAMES = {"dev": "dev half", "heldout": "held-out half", "all": "whole suite"}
_SPLIT = {"dev": "dev", "heldout": "held-out", "all": "both"}
JSON_KEYS = """\
- `latest`: the last run: `label`, `started_at` (UTC), `split`, `note`, `model`, `task_ids`, `systems.<name>`
  (`tasks`, `right`, `accepted_wrong`, `other`, `right_share`, `accepted_wrong_share`, `median_wall_s`),
  `records[]` (one run each: `task_id`, `shape`, `lang`, `system`, `status`, `verdict`, `answer`, `wall_s`,
  `llm_calls`, `error`).
- `history[]`: one row per run, oldest first: `date` (UTC), `kind` (`end to end`, `reviewer alone`, `planner
  alone`), `label`, `split`, `tasks`, `right`, `accepted_wrong`, `other` (tetrarch's, or the role's; a planner
  alone counts as right a plan right in look-ups and computation), `median_wall_s` (end to end, per task) or
  `total_wall_s` (a role alone), `baselines.<react|react_parallel>` (the ReAct baselines' tally where that run
  had them), `measures` (every number the run recorded), `note` (how it was run and what it showed), `source`
  (the file a row before this report came from)."""


def history_row(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A run's history row: tetrarch's counts (none when only the baselines ran) and the baselines beside them."""
    systems = doc["systems"]
    mine = systems.get("tetrarch", {})
    return {"date": doc["started_at"], "kind": "end to end", "label": doc["label"], "split": doc["split"],
            "tasks": len(doc["task_ids"]), **{k: mine.get(k) for k in ("right", "accepted_wrong", "other")},
            "median_wall_s": mine.get("median_wall_s"),
            "baselines": {name: systems[name] for name in BASELINES if name in systems},
            "measures": dict(systems), "note": doc["note"]}


def updated(report: Mapping[str, Any] | None, doc: Mapping[str, Any]) -> dict[str, Any]:
    """``report`` with ``doc`` as its latest run and its row in the history: in place of the row with the same date
    and label (the same run saved again), else appended; every other row is kept as it was."""
    row = history_row(doc)
    history = list((report or {}).get("history", []))
    same = [i for i, r in enumerate(history) if (r["date"], r["label"]) == (row["date"], row["label"])]
    if same:
        history[same[0]] = row
    else:
        history.append(row)
    return {"suite": REPORT, "latest": dict(doc), "history": history}


def write_report(doc: Mapping[str, Any], out_dir: Path, stem: str = REPORT) -> dict[str, Any]:
    """Folds ``doc`` into ``out_dir/<stem>.json`` (created if missing) and renders ``<stem>.md`` from it."""
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    report = updated(json.loads(js.read_text()) if js.exists() else None, doc)
    out_dir.mkdir(parents=True, exist_ok=True)
    js.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    md.write_text(render(report))
    return report


def _latest(doc: Mapping[str, Any]) -> list[str]:
    lines = [f"## Latest run: {doc['label']} ({doc['started_at']} UTC)", "", doc["note"], "",
             f"Model: {doc['model']}. Tasks: {len(doc['task_ids'])} of the {HALF_NAMES[doc['split']]}.", "",
             "| system | tasks | right | accepted wrong | other | median wall s |", "|---|---|---|---|---|---|"]
    for system, s in doc["systems"].items():
        lines.append(f"| {system} | {s['tasks']} | {s['right']} ({100 * s['right_share']:.0f}%) | "
                     f"{s['accepted_wrong']} ({100 * s['accepted_wrong_share']:.0f}%) | {s['other']} | "
                     f"{s['median_wall_s']} |")
    lines += ["", "Runs (verdict, status, answer):", ""]
    lines += [f"- `{r['task_id']}` {r['system']}: **{r['verdict']}** ({r['status']}) {(r['answer'] or '')[:140]!r}"
              for r in doc["records"]]
    return lines + [""]


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _right(row: Mapping[str, Any]) -> str:
    lookups = row.get("measures", {}).get("lookups") if row["kind"] == "planner alone" else None
    return _count(row["right"]) + ("" if lookups is None else f" ({lookups} right in look-ups)")


def _baseline(row: Mapping[str, Any], name: str) -> str:
    b = row.get("baselines", {}).get(name)
    return "-" if b is None else f"{b['right']} / {b['accepted_wrong']}"


def _wall(row: Mapping[str, Any]) -> str:
    if row.get("median_wall_s") is not None:
        return str(row["median_wall_s"])
    return "-" if row.get("total_wall_s") is None else f"{row['total_wall_s']} total"


def _history(rows: list[Mapping[str, Any]]) -> list[str]:
    lines = ["## History", "",
             "One row per run, oldest first; `date` is when the run started (UTC), as the run's own note states it, "
             "else when it was committed. *End to end*: every role on the model, tetrarch's counts beside the native "
             "ReAct baselines' (right / accepted wrong) where that run had them, the median wall per task. *Reviewer "
             "alone*: each task's right plan executed and only the review asked of the model. *Planner alone*: only "
             "the plan asked; right = plans right in look-ups and computation (no answer is written); the role's "
             "total wall. The JSON has every number each run recorded (`measures`) and how it was run (`note`); the "
             "answers of runs before this report are in git history (`git log --diff-filter=D -- "
             "benchmarks/results/`).", "",
             "| date (UTC) | kind | tried | split | tasks | right | accepted wrong | other | ReAct | ReAct, parallel "
             "calls | wall s |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['date']} | {r['kind']} | {r['label']} | {_SPLIT[r['split']]} | {r['tasks']} | "
                     f"{_right(r)} | {_count(r['accepted_wrong'])} | {_count(r['other'])} | "
                     f"{_baseline(r, 'react')} | {_baseline(r, 'react_parallel')} | {_wall(r)} |")
    return lines + [""]


def render(report: Mapping[str, Any]) -> str:
    out = ["# Generality suite end to end on the embedded model", "",
           "Written by `tetrarch bench --suite generality --llm local --label WHAT [--note HOW]` (docs/generality.md),"
           " which replaces the latest run below and adds its row to the history. Goal (issue 61): on the held-out "
           "half, right answers >= the best native ReAct baseline's on the same model, and accepted-wrong answers "
           "<= half of that baseline's.", ""]
    out += _latest(report["latest"]) + _history(report["history"])
    return "\n".join(out + [f"## JSON keys (`{REPORT}.json`)", "", JSON_KEYS, ""])
