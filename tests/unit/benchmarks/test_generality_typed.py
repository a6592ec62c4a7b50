"""Typed outputs on the generality suite (issue 62): every task gets ``output_type`` of its expected answer's shape
(by shape, never by task), and with every role scripted its ``result.output`` validates and equals the expected
value, in both reply forms; the typed report counts both halves (no Ray, no model). The whole suite's run is in
tests/integration/test_generality_typed_all.py (slow)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from agents.llm import LLMRequest
from agents.outputs import output_spec, validate_output
from benchmarks.cli import main as bench_main
from benchmarks.generality.cli import main as generality_main
from benchmarks.generality.model import Expect
from benchmarks.generality.scripted import config_for, run_scripted, schema_shown
from benchmarks.generality.suite import build_suite, suite_tools
from benchmarks.generality.typed import NamedFigure, expected_value, output_right, output_type, shape_of
from benchmarks.generality.typed_measure import PROFILES, typed_script


def _sample():
    """One task per tool-output shape and answer shape (39 of 260, both halves)."""
    seen = {}
    for t in build_suite():
        seen.setdefault((t.shape, shape_of(t.expect)), t)
    return list(seen.values())


def test_every_task_gets_a_type_its_expected_value_validates_as():
    tasks = build_suite()
    assert {shape_of(t.expect) for t in tasks} == {"count", "number", "signed", "name", "names", "named_figure"}
    for t in tasks:
        tp, value = output_type(t.expect), expected_value(t.expect)
        text = json.dumps(TypeAdapter(tp).dump_python(value, mode="json"))
        assert validate_output(output_spec(tp, importable=True), text) == value, t.id


def test_the_type_follows_the_answer_shape_not_the_task():
    assert output_type(Expect(number=3)) is int and output_type(Expect(number=2.5)) is float
    assert output_type(Expect(number=35, sign=-1)) is float and expected_value(Expect(number=35, sign=-1)) == -35.0
    assert output_type(Expect(names=("Rome",), rivals=("Paris",))) is str
    assert output_type(Expect(names=("Ada", "Grace"))) == list[str]
    assert expected_value(Expect(number=2, names=("C-1",))) == NamedFigure(name="C-1", value=2.0)
    with pytest.raises(ValueError, match="neither a figure nor a name"):
        shape_of(Expect())


@pytest.mark.parametrize(("expect", "output", "right"), [
    (Expect(number=100.0), 100.5, True),
    (Expect(number=100.0), 102.0, False),
    (Expect(number=35, sign=-1), -35.0, True),
    (Expect(number=35, sign=-1), 35.0, False),  # the sign is the answer
    (Expect(number=35), -35.0, True),  # a magnitude, as the text grader reads "fell by 35"
    (Expect(names=("Rome",), rivals=("Paris",)), "rome", True),
    (Expect(names=("Rome",), rivals=("Paris",)), "Paris", False),
    (Expect(names=("Ada", "Grace")), ["Grace", "Ada"], True),
    (Expect(names=("Ada", "Grace")), ["Ada"], False),
    (Expect(number=2, names=("Zoë",)), NamedFigure(name="Zoe", value=2.0), True),
    (Expect(number=2, names=("Zoë",)), NamedFigure(name="Zoe", value=3.0), False),
    (Expect(number=2), None, False),
    (Expect(number=1), True, False),
])
def test_a_typed_output_is_graded_with_the_text_graders_tolerance(expect, output, right):
    assert output_right(expect, output) is right


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_sample_of_every_shape_returns_the_expected_value_typed(profile, tmp_path):
    config = config_for("default", tmp_path / "t.db")
    for task in _sample():
        out = run_scripted(typed_script(task), suite_tools(), config, PROFILES[profile])
        assert out.status == "accepted" and out.llm_calls == 3, (task.id, out.stopped_reason, out.feedback)
        assert out.schema_shown, task.id  # the reviewer was asked for the type, where the form puts it
        assert out.output == expected_value(task.expect), task.id
        assert type(out.output) is type(expected_value(task.expect)), task.id


def test_a_review_not_shown_the_schema_is_told_apart():
    spec = output_spec(list[str], importable=True)
    bare = LLMRequest(role="reflector", messages=[{"role": "user", "content": "Review."}])
    assert not schema_shown(bare, spec)
    terse = LLMRequest(role="reflector", messages=[{"role": "user", "content": "Review.\n" + json.dumps(
        spec.json_schema, separators=(",", ":"))}])
    assert schema_shown(terse, spec)
    shaped = LLMRequest(role="reflector", messages=bare.messages, response_format="json", json_schema={
        "properties": {"answer": {"anyOf": [spec.json_schema, {"type": "null"}]}}})
    untyped = LLMRequest(role="reflector", messages=bare.messages, response_format="json", json_schema={
        "properties": {"answer": {"anyOf": [{"type": "string"}, {"type": "null"}]}}})
    assert schema_shown(shaped, spec) and not schema_shown(untyped, spec)


def test_the_typed_command_writes_both_halves_per_reply_form(tmp_path, capsys):
    assert generality_main(["--typed", "--limit", "4", "--config", "default", "--out", str(tmp_path),
                            "--label", "typed sample"]) == 0
    doc = json.loads((tmp_path / "generality-typed.json").read_text())
    halves = doc["configs"]["default"]
    assert set(halves) == set(PROFILES)
    for profile in PROFILES:
        counts = halves[profile]
        assert set(counts) == {"dev", "heldout"}
        assert sum(counts[h]["tasks"] for h in counts) == 4
        assert all(counts[h]["equal"] == counts[h]["tasks"] and not counts[h]["misses"] for h in counts)
    md = (tmp_path / "generality-typed.md").read_text()
    assert "# Generality suite, typed outputs — typed sample" in md and "| held-out |" in md
    assert "typed output equal to the expected value" in capsys.readouterr().out


def test_tetrarch_bench_passes_typed_to_the_generality_suite_and_refuses_it_on_the_model(tmp_path):
    with tempfile.TemporaryDirectory() as out:
        assert bench_main(["--suite", "generality", "--typed", "--limit", "2", "--out", out]) == 0
        assert (Path(out) / "generality-typed.md").exists()
    with pytest.raises(SystemExit, match="scripted roles"):
        bench_main(["--suite", "generality", "--typed", "--llm", "local", "--out", str(tmp_path)])
