"""The sound set's note on the plan's final result: said only where exactly one completed tool step combines two or
more outputs and nothing uses it, and never as a contradiction."""

from __future__ import annotations

from agents.checks.facts import Result, Severity
from agents.checks.sound import final_note, result_notes


def _lookups() -> list[Result]:
    return [Result(1, "churn_rate", "Pulse 2025-02", "3.1%"), Result(2, "churn_rate", "Pulse 2025-03", "2.8%")]


def test_the_computed_difference_is_noted_as_the_final_result():
    results = [*_lookups(), Result(3, "calculator", "difference", 0.3, depends_on=(1, 2))]
    notes = final_note(results)
    assert [n.severity for n in notes] == [Severity.NOTE]
    assert "Step 3 (calculator) computed 0.3 from steps 1 and 2" in notes[0].text
    assert notes[0] in result_notes("Which month had the higher churn, and by how much?", results)


def test_no_note_without_one_clear_final_computation():
    assert final_note(_lookups()) == []  # look-ups only
    used = [*_lookups(), Result(3, "calculator", "", 0.3, depends_on=(1, 2)),
            Result(4, "calculator", "", 30, depends_on=(3,))]
    assert final_note(used) == []  # step 3 is used; step 4 combines one step only
    two = [*_lookups(), Result(3, "calculator", "", 0.3, depends_on=(1, 2)),
           Result(4, "calculator", "", 5.9, depends_on=(1, 2))]
    assert final_note(two) == []  # two finals: which one the task wants is the reviewer's call
    failed = [*_lookups(), Result(3, "calculator", "", None, failed=True, depends_on=(1, 2))]
    assert final_note(failed) == []
    reasoning = [*_lookups(), Result(3, None, "the larger", "3.1%", depends_on=(1, 2))]
    assert final_note(reasoning) == []  # a reasoning step is the model's own words, not a computed result
    long = [*_lookups(), Result(3, "report", "", "x" * 200, depends_on=(1, 2))]
    assert final_note(long) == []
