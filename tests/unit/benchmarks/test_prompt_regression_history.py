"""The prompt-regression history: a run adds one row per role and keeps every older row; the committed markdown is
what the committed JSON renders to (no model)."""

from __future__ import annotations

import json
import shutil

from benchmarks.prompt_regression.history import HISTORY, main, render


def _results(tmp_path, started: str, command: str = "python -m benchmarks.prompt_regression.run --role reflector"):
    summary = {"router": {"passed": 25, "total": 26, "rate": 25 / 26, "median_latency_s": 2.9, "raw_correct": 25},
               "reflector": {"passed": 20, "total": 26, "rate": 20 / 26, "median_latency_s": 11.0, "false_accepts": 3,
                             "failures": ["r-01"]}}
    report = {"generated_at": started, "command": command, "wall_s": 300.0, "summary": summary,
              "prompts": {"router": {"template_id": "router/v7"}, "reflector": {"template_id": "reflector/v10"}},
              "host": {"commit": "abc1234", "dirty": True}}
    path = tmp_path / f"prompt-regression-{started[:10]}.json"
    path.write_text(json.dumps(report))
    return path


def test_a_run_adds_a_row_per_role_and_keeps_every_older_row(tmp_path):
    shutil.copy(HISTORY, tmp_path)
    history = tmp_path / HISTORY.name
    before = json.loads(history.read_text())["history"]

    main([str(_results(tmp_path, "2026-12-02T09:00:00Z", "run --role reflector --checks sound")),
          "--label", "reviewer v10", "--note", "Today's profile. Machine idle.", "--history", str(history)])

    rows = json.loads(history.read_text())["history"]
    assert rows[:-2] == before
    assert [(r["role"], r["prompt"], r["checks"], r["passed"], r["false_accepts"], r["commit"]) for r in rows[-2:]] \
        == [("router", "router/v7", "sound", 25, None, "abc1234+"), ("reflector", "reflector/v10", "sound", 20, 3,
                                                                      "abc1234+")]
    assert "failures" not in rows[-1]["measures"]
    md = history.with_suffix(".md").read_text()
    assert "| 2026-12-02 09:00 | `reviewer v10`: Today's profile. | router | `router/v7` | sound | 25/26 (96%) | - " \
           "| 2.9 | `abc1234+` |" in md
    assert "| 2026-12-02 09:00 | the same run | reflector | `reflector/v10` | sound | 20/26 (77%) | 3 | 11.0 |" in md


def test_the_same_run_added_again_replaces_its_rows(tmp_path):
    history = tmp_path / "h.json"
    results = _results(tmp_path, "2026-12-02T09:00:00Z")
    for note in ("first", "second"):
        main([str(results), "--label", "x", "--note", note, "--history", str(history)])
    assert [r["note"] for r in json.loads(history.read_text())["history"]] == ["second", "second"]


def test_the_committed_markdown_is_the_committed_json_rendered():
    history = json.loads(HISTORY.read_text())
    assert HISTORY.with_suffix(".md").read_text() == render(history)
    dates = [r["date"] for r in history["history"]]
    assert dates == sorted(dates) and all(r["note"] and r["source"] for r in history["history"])
    per_experiment = [p.name for p in HISTORY.parent.glob("prompt-regression-*") if p.stem != HISTORY.stem]
    assert per_experiment == []
