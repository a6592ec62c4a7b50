"""The corpus benchmark's typed mode (``--typed``, issue 62): each task's output type comes from what its grader
checks (a number, a name, or both), ``result.output`` is graded with the text grader's tolerance, the run says
it was typed and its history row says so (no Ray, no model; the Ray run is
tests/integration/test_corpus_typed_ray.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from agents.outputs import output_spec, validate_output
from benchmarks.cli import main as bench_main
from benchmarks.history import history_row
from benchmarks.report import write_report
from benchmarks.runner import RunRecord, SuiteRun, from_jsonable, to_jsonable
from benchmarks.suite import (
    BenchTask,
    NamedNumber,
    answer_kind,
    expected_output,
    load_suite,
    output_correct,
    output_type_for,
    task_correct,
)

LOCAL = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "local"
STEM = "corpus-heldout"


def _task(number=None, name=None, rival=None) -> BenchTask:
    task = load_suite("corpus", limit=1)[0]
    return BenchTask("t", task.gold, number, name, rival)


def test_every_corpus_task_gets_the_type_of_what_its_grader_checks():
    tasks = load_suite("corpus")
    assert {answer_kind(t) for t in tasks} == {"number", "name"}
    for t in tasks:
        tp = output_type_for(t)
        assert tp is {"number": float, "name": str}[answer_kind(t)]
        text = json.dumps(TypeAdapter(tp).dump_python(expected_output(t), mode="json"))
        value = validate_output(output_spec(tp, importable=True), text)
        assert output_correct(t, value) and task_correct(t, str(value)), t.id
    both = _task(2.5, "Rome", "Paris")
    assert output_type_for(both) is NamedNumber and expected_output(both) == NamedNumber(name="Rome", value=2.5)


@pytest.mark.parametrize(("task", "output", "right"), [
    (_task(6650.0), 6650.0, True),
    (_task(6650.0), 6700.0, True),  # within 1%, as answer_matches
    (_task(6650.0), 6800.0, False),
    (_task(6650.0), -6650.0, False),
    (_task(11_450_000.0), 11.45, False),  # a bare figure has no scale word to read
    (_task(0.004), 0.012, True),  # the 0.01 absolute floor
    (_task(name="Mount Everest", rival="Burj Khalifa"), "mount everest", True),
    (_task(name="Mount Everest", rival="Burj Khalifa"), "Burj Khalifa", False),
    (_task(name="Mount Everest", rival="Burj Khalifa"), "Burj Khalifa, not Mount Everest", False),
    (_task(2.5, "Rome", "Paris"), NamedNumber(name="Rome", value=2.5), True),
    (_task(2.5, "Rome", "Paris"), NamedNumber(name="Paris", value=2.5), False),
    (_task(6650.0), None, False),
    (_task(6650.0), "6650", False),
])
def test_a_typed_output_is_graded_with_the_text_graders_tolerance(task, output, right):
    assert output_correct(task, output) is right


def _typed_run(rights: list[bool], when: str) -> SuiteRun:
    records = [RunRecord("corpus", f"corpus-lookup-{i:02}", "tetrarch", 0, "accepted", 10.0, 1.0, 3, 1000, 50, right,
                         1, None, None, output=6650.0) for i, right in enumerate(rights)]
    return SuiteRun("corpus", "real model (local)", "local", False, 1.0, records, when, "heldout", answers="typed")


def test_a_typed_run_says_so_in_its_json_and_its_history_row(tmp_path):
    shutil.copy(LOCAL / f"{STEM}.json", tmp_path)
    committed = [r.get("answers", "text") for r in json.loads((LOCAL / f"{STEM}.json").read_text())["history"]]
    write_report(_typed_run([True, False], "2026-12-02T10:00:00Z"), tmp_path, label="typed-outputs",
                 note="Typed outputs on the held-out corpus.")
    doc = json.loads((tmp_path / f"{STEM}.json").read_text())
    row = doc["history"][-1]
    assert (row["answers"], row["right"], row["tasks"]) == ("typed", 1, 2)
    assert [r.get("answers", "text") for r in doc["history"][:-1]] == committed  # older rows keep what they were
    md = (tmp_path / f"{STEM}.md").read_text()
    assert "| 2026-12-02 10:00 | `typed-outputs` (typed outputs): Typed outputs on the held-out corpus. | 1/2 |" in md
    assert from_jsonable(to_jsonable(_typed_run([True], "2026-12-02T10:00:00Z"))).answers == "typed"
    assert history_row(to_jsonable(_typed_run([True], "x")), "l", "")["answers"] == "typed"


def test_a_typed_run_is_tetrarchs_alone(tmp_path):
    with pytest.raises(SystemExit, match="--system tetrarch"):
        bench_main(["--suite", "corpus", "--split", "heldout", "--typed", "--out", str(tmp_path)])
