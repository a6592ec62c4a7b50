"""A real-model suite's report keeps its history: ``<stem>.json`` is the last run of several systems side by side
(DESIGN.md's format, every run's records, its ``label`` and ``note``) plus ``history``, one dated row per run,
oldest first; ``<stem>.md`` is rendered from the JSON alone (``benchmarks.report.render``).

A run of one system (tetrarch alone, the usual check of a change) adds only its row: the side-by-side tables stay
the comparison they were. A run saved again (same ``generated_at`` and label) updates its row in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchmarks.suite import REAL_MODEL_SUITES, SYSTEMS

__all__ = ["DEFAULT_LABEL", "JSON_KEYS", "first_sentence", "folded", "history_lines", "history_row", "keeps_history",
           "latest_lines"]

DEFAULT_LABEL = "current code"
_EARLIER = "before the history"
_NAMES = {"tetrarch": "tetrarch", "react": "ReAct", "react_parallel": "ReAct + parallel calls",
          "react_json": "ReAct, JSON text", "react_parallel_json": "ReAct + parallel calls, JSON text"}
JSON_KEYS = """\
- top level: the latest run of several systems side by side (`suite`, `split`, `llm`, `systems.<name>`, `runs[]`,
  `generated_at`: DESIGN.md's results format), its `label` and `note`.
- `history[]`: one row per run, oldest first: `date` (the run's `generated_at`, UTC, when it was saved), `label`
  (what was tried), `note` (how it was run and what it showed), `split`, `llm`, `answers` (`text`: the answer's
  text was graded; `typed`: each task ran with `output_type` of its answer's kind and `result.output` was graded
  with the same tolerance; a row without it is `text`), `tasks`, `right`, `accuracy`,
  `completed`, `median_wall_s` (tetrarch's; null when it did not run), `systems.<name>` (every system that ran:
  `right` and every number of its summary above), `source` (the file a row before this report came from; its
  records are in git history)."""


def keeps_history(suite: str, llm: str) -> bool:
    """Accuracy on a real model is what a change is judged by, run after run: those reports keep a history."""
    return suite in REAL_MODEL_SUITES and llm != "sim"


def first_sentence(text: str) -> str:
    """Up to the first full stop (or ! ?) followed by a space: what the history table shows of a note."""
    match = re.match(r"(.+?[.!?])(?=\s)", text.strip(), re.S)
    return (match.group(1) if match else text.strip()).replace("\n", " ")


def _tally(doc: Mapping[str, Any], system: str) -> dict[str, Any]:
    """Every number the run's summary has for the system, and its right answers counted from the records."""
    right = sum(r["correct"] is True for r in doc["runs"] if r["system"] == system)
    return {"right": right, **doc["systems"][system]}


def history_row(doc: Mapping[str, Any], label: str, note: str) -> dict[str, Any]:
    """A run's row, from its results JSON: tetrarch's counts (null when only baselines ran) and every system's."""
    systems = {name: _tally(doc, name) for name in SYSTEMS if name in doc["systems"]}
    mine = systems.get("tetrarch", {})
    return {"date": doc["generated_at"], "label": label, "note": note, "split": doc.get("split", "all"),
            "llm": doc["llm"], "answers": doc.get("answers", "text"),
            **{k: mine.get(k) for k in ("tasks", "right", "accuracy", "completed", "median_wall_s")},
            "systems": systems}


def folded(report: Mapping[str, Any] | None, doc: Mapping[str, Any], label: str, note: str) -> dict[str, Any]:
    """``report`` with ``doc``'s row in its history (in place of the row with the same date and label, else
    appended) and ``doc`` as its tables when ``doc`` ran several systems or the report had none."""
    if report is not None and "history" not in report:  # written before it kept a history: its run is a row
        report = {**report, "label": report.get("label", _EARLIER), "note": report.get("note", "")}
        report["history"] = [history_row(report, report["label"], report["note"])]
    history = list(report["history"]) if report is not None else []
    row = history_row(doc, label, note)
    same = [i for i, r in enumerate(history) if (r["date"], r["label"]) == (row["date"], row["label"])]
    if same:
        history[same[0]] = {**history[same[0]], **row}  # keeps what only the older row knew (its source)
    else:
        history.append(row)
    if report is None or len(doc["systems"]) > 1:
        latest = {**doc, "label": label, "note": note}
    else:
        latest = {k: v for k, v in report.items() if k != "history"}
    return {**latest, "history": history}


def latest_lines(report: Mapping[str, Any]) -> list[str]:
    """The heading and note of the report's tables (none for a report written before it kept a history)."""
    if "history" not in report:
        return []
    when = report["generated_at"].replace("T", " ")[:16]
    return [f"Written by `tetrarch bench --suite {report['suite']} --split {report.get('split', 'all')} --llm local "
            "[--label WHAT --note HOW]`: a run of several systems side by side replaces the tables below; every run "
            "adds its row to the history at the end, and older rows are kept.", "",
            f"## Latest side-by-side run: {report.get('label', DEFAULT_LABEL)} ({when} UTC)", "",
            *([report["note"], ""] if report.get("note") else [])]


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _systems(row: Mapping[str, Any]) -> str:
    return "; ".join(name if name == "tetrarch" else f"{_NAMES.get(name, name)} {s['right']}/{s['tasks']}"
                     for name, s in row["systems"].items())


def history_lines(report: Mapping[str, Any]) -> list[str]:
    """The dated history table and the JSON's keys (none for a report written before it kept a history)."""
    if "history" not in report:
        return []
    lines = ["## History", "",
             "One row per run, oldest first; `date` is when the run was saved (UTC). *Tried*: the run's label (*typed "
             "outputs*: graded on `result.output`, not the text) and the first sentence of its note (the JSON has the "
             "whole note). Right, accuracy and median wall are "
             "tetrarch's; *systems* lists what ran, with each baseline's right answers. Rows before this report "
             "came from one file per experiment (`source` in the JSON); their per-task records are in git history "
             "(`git log --diff-filter=D -- benchmarks/results/local/`).", "",
             "| date (UTC) | tried | right | accuracy | median wall s | systems |", "|---|---|---|---|---|---|"]
    for r in report["history"]:
        typed = " (typed outputs)" if r.get("answers") == "typed" else ""
        tried = f"`{r['label']}`{typed}" + (f": {first_sentence(r['note'])}" if r.get("note") else "")
        right = "-" if r["right"] is None else f"{r['right']}/{r['tasks']}"
        lines.append(f"| {r['date'].replace('T', ' ')[:16]} | {tried} | {right} | {_cell(r['accuracy'], '.0%')} | "
                     f"{_cell(r['median_wall_s'], '.2f')} | {_systems(r)} |")
    split = report.get("split", "all")
    stem = report["suite"] if split == "all" else f"{report['suite']}-{split}"
    return lines + ["", f"## JSON keys (`{stem}.json`)", "", JSON_KEYS, ""]
