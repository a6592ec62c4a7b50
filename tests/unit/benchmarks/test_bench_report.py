"""The report states medians, ratios and whether each target was met, from the records it is given."""

from __future__ import annotations

import json

from benchmarks.report import ratio_lines, role_lines, target_lines, write_report
from benchmarks.runner import RunRecord, SuiteRun, from_jsonable


def record(system: str, task: str, wall: float, tokens: int, calls: int) -> RunRecord:
    timeline = [{"step_id": 1, "tool": "lookup", "status": "completed", "start": 0.1, "end": wall - 0.1}]
    return RunRecord("parallel", task, system, 0, "accepted", wall, 0.1, calls, tokens, 50, None, 1,
                     wall - 0.2, wall - 0.2, timeline)


def suite_run() -> SuiteRun:
    records = []
    for i, (t, r, p) in enumerate([(1.0, 5.0, 1.8), (2.0, 9.0, 2.5), (1.5, 7.0, 2.0)]):
        records += [record("tetrarch", f"t{i}", t, 1000, 3), record("react", f"t{i}", r, 8000, 8),
                    record("react_parallel", f"t{i}", p, 3000, 3)]
    return SuiteRun("parallel", "ttft 0.35s", "sim", False, 1.0, records)


def test_ratios_are_medians_of_each_system():
    summary = suite_run().summary()
    assert summary["systems"]["tetrarch"]["median_wall_s"] == 1.5
    lines = ratio_lines(summary)
    assert lines[0].startswith("- vs ReAct (native): **4.67× faster**") and "8.00× fewer input tokens" in lines[0]
    assert "1.33× faster" in lines[1]


def test_targets_say_met_or_missed():
    lines = target_lines(suite_run().summary())
    assert any("vs ReAct (native): 4.67×" in x and x.endswith("met") for x in lines)
    assert any("ReAct + parallel calls (native): 1.33×" in x and "MISSED" in x for x in lines)
    assert any("input tokens than ReAct (native): 8.00×" in x and x.endswith("met") for x in lines)
    assert any("median 3 (target 3) — met" in x for x in lines)


def test_write_report_writes_json_markdown_and_plots(tmp_path):
    summary = write_report(suite_run(), tmp_path)
    doc = json.loads((tmp_path / "parallel.json").read_text())
    assert len(doc["runs"]) == 9 and doc["systems"] == json.loads(json.dumps(summary["systems"]))
    md = (tmp_path / "parallel.md").read_text()
    assert "| tetrarch (plan-then-execute) | plan | 3 | 3 | 1.50 |" in md and "Targets:" in md
    assert "| ReAct | native | 3 |" in md and "`native` = native function calling" in md
    assert all(x["tool_calling"] for x in doc["systems"].values())
    for png in ("parallel.png", "parallel-gantt.png"):
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG" and f"]({png})" in md


def test_targets_are_not_judged_when_tetrarch_did_not_complete_its_tasks():
    run = suite_run()
    run.records[0].status = "failed"
    assert target_lines(run.summary()) == [
        "- not judged: tetrarch completed 2 of 3 tasks (see the runs in the JSON for why)"]


def test_the_report_says_where_tetrarchs_tokens_go_per_role(tmp_path):
    run = suite_run()
    for i, r in enumerate(x for x in run.records if x.system == "tetrarch"):
        r.by_role = {"reflector": {"llm_calls": 1, "input_tokens": 300 + i, "output_tokens": 20},
                     "router": {"llm_calls": 1, "input_tokens": 200, "output_tokens": 8},
                     **({"executor": {"llm_calls": 1, "input_tokens": 90, "output_tokens": 5}} if i == 0 else {})}
    summary = run.summary()
    roles = summary["systems"]["tetrarch"]["by_role"]
    assert roles["reflector"]["input_tokens"] == 301 and roles["executor"]["input_tokens"] == 0  # absent = 0 calls
    lines = role_lines(summary)
    assert [x.split(" |")[0] for x in lines[-3:]] == ["| router", "| executor", "| reflector"]  # in pipeline order
    assert "| reflector | 1 | 301 | 20 |" in lines
    write_report(run, tmp_path)
    assert "| router | 1 | 200 | 8 |" in (tmp_path / "parallel.md").read_text()
    assert role_lines(suite_run().summary()) == []  # results recorded before per-role usage: no table


def test_a_report_of_one_system_has_no_ratios_and_still_plots(tmp_path):
    run = suite_run()
    run.records = [r for r in run.records if r.system == "tetrarch"]
    summary = write_report(run, tmp_path)
    assert list(summary["systems"]) == ["tetrarch"] and ratio_lines(summary) == []
    assert (tmp_path / "parallel.png").read_bytes()[:4] == b"\x89PNG"


def test_every_mode_is_in_the_json_and_report_and_old_results_keep_theirs(tmp_path):
    run = suite_run()
    run.records += [record("react_json", f"t{i}", 6.0, 9000, 8) for i in range(3)]
    summary = write_report(run, tmp_path)
    modes = {name: x["tool_calling"] for name, x in summary["systems"].items()}
    assert modes == {"tetrarch": "plan", "react": "native", "react_parallel": "native", "react_json": "json"}
    md = (tmp_path / "parallel.md").read_text()
    assert "| ReAct, JSON text | json | 3 |" in md and "- vs ReAct, JSON text (json): **4.00× faster**" in md
    # a results file measured before modes were recorded: its ReAct baselines wrote JSON text
    doc = json.loads((tmp_path / "parallel.json").read_text())
    for x in doc["systems"].values():
        del x["tool_calling"]
    old = from_jsonable(doc).summary()["systems"]
    assert old["react"]["tool_calling"] == "json" and old["tetrarch"]["tool_calling"] == "plan"
