"""The sound set's note on a computation with one step's value on both sides of '-' or '/': its result is the same
whatever the data. An observation for the reviewer, never a veto."""

from __future__ import annotations

from agents.checks.facts import Result, Severity
from agents.checks.sound import cancelling_notes, result_notes

LOOKUP = Result(1, "customer", "C-3307", {"id": "C-3307", "balance_eur": 20975.25})


def _calc(expression: str, output: object = 1.0, *, failed: bool = False, tool: str | None = "calculator"):
    return Result(2, tool, "", None if failed else output, failed=failed, depends_on=(1,),
                  inputs={"expression": expression})


def test_a_ratio_of_a_value_to_itself_is_noted():
    expression = "{$step_1_result}.balance_eur / {$step_1_result}.balance_eur"
    notes = cancelling_notes([LOOKUP, _calc(expression)])
    assert [n.severity for n in notes] == [Severity.NOTE]
    assert expression in notes[0].text and "'/'" in notes[0].text
    task = "How many times the balance of C-1042 is that of C-3307?"
    assert notes[0] in result_notes(task, [LOOKUP, _calc(expression)])


def test_a_difference_of_a_value_with_itself_is_noted_in_any_reference_form():
    assert cancelling_notes([LOOKUP, _calc("$step_1_result - $step_1_result", 0)])
    assert cancelling_notes([LOOKUP, _calc("round({$step_1_result} - {$step_1_result}, 2)", 0)])


def test_silent_where_the_sides_differ_or_nothing_ran():
    two = [LOOKUP, Result(3, "customer", "C-1042", {"balance_eur": 9.5}),
           Result(4, "calculator", "", 2207.9, depends_on=(1, 3),
                  inputs={"expression": "{$step_1_result}.balance_eur / {$step_3_result}.balance_eur"})]
    assert cancelling_notes(two) == []
    assert cancelling_notes([LOOKUP, _calc("{$step_1_result}.balance_eur / 2")]) == []
    assert cancelling_notes([LOOKUP, _calc("{$step_1_result} + {$step_1_result}", 2.0)]) == []  # doubles: data
    assert cancelling_notes([LOOKUP, _calc("{$step_1_result} - {$step_1_result}", failed=True)]) == []
    assert cancelling_notes([LOOKUP, _calc("{$step_1_result} - {$step_1_result}", tool=None)]) == []
    assert cancelling_notes([LOOKUP, _calc("the balance / the balance")]) == []
