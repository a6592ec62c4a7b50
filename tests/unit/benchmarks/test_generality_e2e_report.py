"""The one end-to-end generality report: a run replaces the latest run and adds its dated history row, keeping
every older row; the committed markdown is what the committed JSON renders to (no model, no Ray)."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from benchmarks.cli import main as bench_main
from benchmarks.generality.e2e import E2ERecord, tally
from benchmarks.generality.e2e_report import JSON_KEYS, REPORT, history_row, render, write_report

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"


def _doc(label: str, started_at: str, verdicts: dict[str, str], note: str = "a test run") -> dict:
    records = [E2ERecord(f"t-en-{i}", "plain_numbers", "en", system, "accepted", verdict, "42", 1.5 + i, 3)
               for i, (system, verdict) in enumerate(verdicts.items())]
    return {"label": label, "started_at": started_at, "split": "heldout", "note": note, "model": "fake",
            "task_ids": ["t-en-0"], "systems": tally(records), "records": [asdict(r) for r in records]}


def test_a_run_replaces_the_latest_and_appends_its_row_keeping_every_older_row(tmp_path):
    shutil.copy(RESULTS / f"{REPORT}.json", tmp_path)
    before = json.loads((tmp_path / f"{REPORT}.json").read_text())["history"]
    doc = _doc("new rule", "2026-12-02 09:00", {"tetrarch": "right", "react": "accepted_wrong"})

    report = write_report(doc, tmp_path)

    assert report["history"][:-1] == before
    row = report["history"][-1]
    assert (row["date"], row["label"], row["kind"], row["right"], row["accepted_wrong"]) == \
        ("2026-12-02 09:00", "new rule", "end to end", 1, 0)
    assert row["baselines"]["react"]["accepted_wrong"] == 1
    assert json.loads((tmp_path / f"{REPORT}.json").read_text()) == report
    md = (tmp_path / f"{REPORT}.md").read_text()
    assert "## Latest run: new rule (2026-12-02 09:00 UTC)" in md
    assert "| 2026-12-02 09:00 | end to end | new rule | held-out | 1 | 1 | 0 | 0 | 0 / 1 | - | 1.5 |" in md


def test_the_same_run_saved_again_updates_its_row_and_another_run_gets_its_own(tmp_path):
    first = _doc("rule A", "2026-12-02 09:00", {"tetrarch": "other"}, note="PARTIAL")
    write_report(first, tmp_path)
    write_report(_doc("rule A", "2026-12-02 09:00", {"tetrarch": "right"}), tmp_path)
    write_report(_doc("rule A", "2026-12-02 10:00", {"tetrarch": "accepted_wrong"}), tmp_path)
    report = write_report(_doc("rule B", "2026-12-02 10:00", {"tetrarch": "right"}), tmp_path)

    assert [(r["date"], r["label"], r["right"]) for r in report["history"]] == [
        ("2026-12-02 09:00", "rule A", 1), ("2026-12-02 10:00", "rule A", 0), ("2026-12-02 10:00", "rule B", 1)]
    assert report["latest"]["label"] == "rule B"


def test_a_run_of_the_baselines_alone_has_no_tetrarch_counts():
    row = history_row(_doc("baselines", "2026-12-02 09:00", {"react": "right", "react_parallel": "other"}))
    assert (row["right"], row["accepted_wrong"], row["other"], row["median_wall_s"]) == (None, None, None, None)
    assert set(row["baselines"]) == {"react", "react_parallel"}


def test_the_committed_markdown_is_the_committed_json_rendered():
    report = json.loads((RESULTS / f"{REPORT}.json").read_text())
    assert (RESULTS / f"{REPORT}.md").read_text() == render(report)
    assert JSON_KEYS in render(report)
    kinds = {r["kind"] for r in report["history"]}
    assert kinds == {"end to end", "reviewer alone", "planner alone"}
    dates = [r["date"] for r in report["history"]]
    assert dates == sorted(dates)  # oldest first: a new run appends at the end


def test_a_note_is_for_an_end_to_end_run_only():
    with pytest.raises(SystemExit, match="history row"):
        bench_main(["--suite", "generality", "--note", "x"])
