"""The sound set's note on arithmetic with figures from nowhere: said only for a step that uses no step and computes
with two or more figures neither the task nor another step's output states, and never as a contradiction."""

from __future__ import annotations

from agents.checks.facts import Result, Severity
from agents.checks.review import result_facts
from agents.checks.sound import unstated_figures_note


def _calc(step_id: int, expression: str, output: object, depends_on: tuple[int, ...] = ()) -> Result:
    return Result(step_id, "calculator", "", output, depends_on=depends_on, arguments=expression,
                  inputs={"expression": expression})


def test_a_plan_that_computes_before_looking_anything_up_is_noted():
    results = [_calc(1, "1800 / 4500", 0.4)]
    notes = unstated_figures_note("How many times the population of A is that of B? Two decimals.", results)
    assert [n.severity for n in notes] == [Severity.NOTE]
    assert notes[0].text.startswith("Step 1 computes with 1800 and 4500, figures that neither the task nor")
    assert notes[0] in result_facts("How many times the population of A is that of B?", results)
    assert notes[0] in result_facts("How many times the population of A is that of B?", results, ("numeric",))


def test_the_steps_outputs_do_not_vouch_for_each_other():
    # "max(1200, 900)" returns 1200: that output is the invented figure again, not a source of it.
    results = [_calc(1, "max(1200, 900)", 1200), _calc(2, "min(1200, 900)", 900)]
    notes = unstated_figures_note("Which team is larger, A or B?", results)
    assert len(notes) == 1 and notes[0].text.startswith("Steps 1 and 2 compute with 1200 and 900")


def test_the_digits_of_a_code_in_the_task_are_no_figure():
    results = [_calc(1, "round(7316 / 4210, 2)", 1.74)]
    assert unstated_figures_note("How many times the balance of K-4210 is that of K-7316?", results)


def test_silent_where_the_figures_have_a_source():
    task = "The shop sold 1,200 units in May and 900 in June: how many fewer in June?"
    assert unstated_figures_note(task, [_calc(1, "1200 - 900", 300)]) == []  # the task states them
    looked_up = [Result(1, "sales", "May", "1200 units"), Result(2, "sales", "June", "900 units"),
                 _calc(3, "1200 - 900", 300)]
    assert unstated_figures_note("How many fewer units in June than in May?", looked_up) == []
    referenced = [Result(1, "sales", "May", "1200 units"), Result(2, "sales", "June", "900 units"),
                  _calc(3, "{$step_1_result} - {$step_2_result}", 300, depends_on=(1, 2))]
    assert unstated_figures_note("How many fewer units in June than in May?", referenced) == []
    one = [_calc(1, "{$step_1_result} * 100", 30)]
    assert unstated_figures_note("What share is it?", one) == []
    rounded = [Result(1, "rate", "A", "0.1234"), _calc(2, "round(0.1234 * 100, 2)", 12.34)]
    assert unstated_figures_note("What is A's rate in percent?", rounded) == []  # 100 alone; round's digits
    query = [Result(1, "sql", "", [{"n": 3}], inputs={"query": "SELECT count(*) FROM t WHERE a > 10 AND b < 20"})]
    assert unstated_figures_note("How many rows?", query) == []  # not arithmetic
