"""The held-out corpus report on a real model is ONE pair of files: a run of several systems side by side replaces its
tables, every run adds its dated history row and every older row is kept; the committed markdown is what the
committed JSON renders to (no model, no Ray)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.cli import _parser, results_dir
from benchmarks.history import first_sentence, keeps_history
from benchmarks.report import render, write_report
from benchmarks.runner import RunRecord, SuiteRun

LOCAL = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "local"
STEM = "corpus-heldout"


def _run(verdicts: dict[str, list[bool]], generated_at: str) -> SuiteRun:
    records = [RunRecord("corpus", f"corpus-lookup-{i:02}", system, 0, "accepted", 10.0 + i, 1.0, 3, 1000, 50, right,
                         1, None, None, [{"step_id": 1, "tool": "doc_search", "status": "completed", "start": 0.5,
                                          "end": 9.5}])
               for system, rights in verdicts.items() for i, right in enumerate(rights)]
    return SuiteRun("corpus", "real model (local)", "local", False, 1.0, records, generated_at, "heldout")


def test_a_tetrarch_only_run_appends_its_row_and_keeps_the_side_by_side_tables(tmp_path):
    shutil.copy(LOCAL / f"{STEM}.json", tmp_path)
    before = json.loads((tmp_path / f"{STEM}.json").read_text())

    write_report(_run({"tetrarch": [True, True, False]}, "2026-12-02T09:30:00Z"), tmp_path,
                 label="new rule", note="With the new rule, the demo's configuration. Nothing else changed.")

    after = json.loads((tmp_path / f"{STEM}.json").read_text())
    assert after["history"][:-1] == before["history"]
    assert {k: v for k, v in after.items() if k != "history"} == {k: v for k, v in before.items() if k != "history"}
    row = after["history"][-1]
    assert (row["date"], row["label"], row["right"], row["tasks"], row["median_wall_s"]) == \
        ("2026-12-02T09:30:00Z", "new rule", 2, 3, 11.0)
    assert list(row["systems"]) == ["tetrarch"]
    md = (tmp_path / f"{STEM}.md").read_text()
    assert "| 2026-12-02 09:30 | `new rule`: With the new rule, the demo's configuration. | 2/3 | 67% | 11.00 | " \
           "tetrarch |" in md
    assert "Nothing else changed" not in md  # the table shows the first sentence; the JSON keeps the whole note
    assert not (tmp_path / "corpus.png").exists()  # the side-by-side run's plots are not overwritten


def test_a_side_by_side_run_replaces_the_tables_and_adds_its_row(tmp_path):
    shutil.copy(LOCAL / f"{STEM}.json", tmp_path)
    rows_before = len(json.loads((tmp_path / f"{STEM}.json").read_text())["history"])

    write_report(_run({"tetrarch": [True, True], "react": [True, False]}, "2026-12-02T11:00:00Z"), tmp_path,
                 label="baselines again", note="Both systems on today's code.")

    after = json.loads((tmp_path / f"{STEM}.json").read_text())
    assert list(after["systems"]) == ["tetrarch", "react"] and len(after["runs"]) == 4
    assert (after["label"], after["note"], after["generated_at"]) == \
        ("baselines again", "Both systems on today's code.", "2026-12-02T11:00:00Z")
    assert len(after["history"]) == rows_before + 1
    assert after["history"][-1]["systems"]["react"]["right"] == 1
    md = (tmp_path / f"{STEM}.md").read_text()
    assert "## Latest side-by-side run: baselines again (2026-12-02 11:00 UTC)" in md
    assert "tetrarch; ReAct 1/2 |" in md
    assert (tmp_path / "corpus.png").read_bytes()[:4] == b"\x89PNG"


def test_the_same_run_saved_again_updates_its_row_and_a_first_run_starts_the_report(tmp_path):
    run = _run({"tetrarch": [False]}, "2026-12-02T09:30:00Z")
    write_report(run, tmp_path, label="rule A")
    run.records[0].correct = True
    write_report(run, tmp_path, label="rule A")
    write_report(_run({"tetrarch": [True]}, "2026-12-02T10:30:00Z"), tmp_path, label="rule A")

    report = json.loads((tmp_path / f"{STEM}.json").read_text())
    assert [(r["date"], r["right"]) for r in report["history"]] == \
        [("2026-12-02T09:30:00Z", 1), ("2026-12-02T10:30:00Z", 1)]
    assert report["generated_at"] == "2026-12-02T09:30:00Z"  # one system: tables only when there are none yet


def test_a_simulated_run_is_a_plain_report():
    assert keeps_history("corpus", "local") and keeps_history("corpus", "gpt-4o-mini")
    assert not keeps_history("corpus", "sim") and not keeps_history("parallel", "local")


def test_the_committed_markdown_is_the_committed_json_rendered():
    report = json.loads((LOCAL / f"{STEM}.json").read_text())
    assert (LOCAL / f"{STEM}.md").read_text() == render(report)
    dates = [r["date"] for r in report["history"]]
    # the side-by-side run and the 11 experiments folded in from their files, then each run since, appended
    assert dates == sorted(dates) and len(dates) >= 12
    assert all(r["source"] and r["note"] for r in report["history"][:12])
    assert all(r["label"] and r["note"] for r in report["history"])
    assert not list(LOCAL.glob(f"{STEM}-*"))  # no file per experiment


def test_first_sentence_stops_at_a_full_stop_before_a_space():
    assert first_sentence("At bc1a6a2 (planning/tool_inputs.py), 0.5 s; nice 19. 26/31 right.") == \
        "At bc1a6a2 (planning/tool_inputs.py), 0.5 s; nice 19."
    assert first_sentence("81% (was 77%)") == "81% (was 77%)"


def test_a_local_run_writes_beside_the_embedded_models_results_and_a_label_needs_a_history():
    assert results_dir(_parser().parse_args(["--suite", "corpus", "--llm", "local"])) == LOCAL
    assert results_dir(_parser().parse_args(["--suite", "corpus"])) == LOCAL.parent
    assert results_dir(_parser().parse_args(["--llm", "local", "--out", "/x"])) == Path("/x")
    from benchmarks.cli import main

    with pytest.raises(SystemExit, match="history row"):
        main(["--suite", "parallel", "--label", "x"])


def test_a_rerender_keeps_the_label_note_and_history(tmp_path):
    from benchmarks.cli import main

    for name in (f"{STEM}.json", f"{STEM}.md"):
        shutil.copy(LOCAL / name, tmp_path)
    main(["--suite", "corpus", "--split", "heldout", "--llm", "local", "--rerender", "--out", str(tmp_path)])
    for name in (f"{STEM}.json", f"{STEM}.md"):
        assert (tmp_path / name).read_text() == (LOCAL / name).read_text()


def test_a_report_written_before_the_history_becomes_its_first_row(tmp_path):
    from benchmarks.runner import to_jsonable

    old = to_jsonable(_run({"tetrarch": [True], "react": [False]}, "2026-11-20T08:00:00Z"))
    (tmp_path / f"{STEM}.json").write_text(json.dumps(old))
    write_report(_run({"tetrarch": [False]}, "2026-12-02T09:30:00Z"), tmp_path, label="rule A")

    report = json.loads((tmp_path / f"{STEM}.json").read_text())
    assert [(r["date"], r["label"], r["right"]) for r in report["history"]] == \
        [("2026-11-20T08:00:00Z", "before the history", 1), ("2026-12-02T09:30:00Z", "rule A", 0)]
    assert report["runs"] == old["runs"] and report["label"] == "before the history"
