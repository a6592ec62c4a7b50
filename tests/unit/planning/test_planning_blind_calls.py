"""``planning.blind_calls``: only a call that cannot depend on the task is asked about — an argument copied from
the tool's own entry with none of its figures in the task, or one reference on both sides of ``-``, ``/``, ``%``."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.checks.numbers import numbers_in
from planning.blind_calls import BlindCall, blind_call
from planning.models import PlanStep

relaxed = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
ENTRY = '- calculator(expression: str) -> number: Evaluate, e.g. "(2.10 - 2.75) / 2.75 * 100" or "max(3, 4) - 1".'
refs = st.builds(lambda n, field: f"{{$step_{n}_result}}" + (f".{field}" if field else ""),
                 st.integers(1, 9), st.sampled_from(["", "balance", "units"]))
ops = st.sampled_from(["+", "-", "*", "/", "%", "//"])


def check(step: PlanStep, entry: str, task: str) -> BlindCall | None:
    """``blind_call`` with the task's figures as the planner role reads them (the checks' number reader)."""
    return blind_call(step, entry, task, task_figures=numbers_in(task))


def calc(expression: str) -> PlanStep:
    return PlanStep(step_id=5, tool_name="calculator", tool_input={"expression": expression}, depends_on=[1])


@relaxed
@given(refs, ops, refs)
def test_two_references_are_asked_about_only_when_they_are_one_and_the_operator_cancels(a: str, op: str,
                                                                                        b: str) -> None:
    flagged = check(calc(f"round({a} {op} {b}, 2)"), ENTRY, "any task") is not None
    assert flagged == (a == b and op in {"-", "/", "%", "//"})


@relaxed
@given(st.text(min_size=1, max_size=30))
def test_an_argument_that_is_not_in_the_tools_entry_is_never_a_copied_example(value: str) -> None:
    if value.strip() in ENTRY or "$step_" in value:
        return
    assert check(calc(value), ENTRY, "any task") is None


def test_the_example_is_a_plain_call_when_the_task_writes_its_figures() -> None:
    assert check(calc("(2.10 - 2.75) / 2.75 * 100"), ENTRY, "Work out (2.10 - 2.75) / 2.75 * 100.") is None
    assert check(calc("(2.10 - 2.75) / 2.75 * 100"), ENTRY, "Wie viel ist das?") is not None


def test_digits_inside_the_tasks_codes_are_not_the_examples_figures() -> None:
    task = "Combien de fois solde (EUR) de F-0815 représente solde (EUR) de F-2046 ? Deux décimales."
    assert check(calc("max(3, 4) - 1"), ENTRY, task) is not None  # "4" and "1" only inside the codes
    assert check(calc("max(3, 4) - 1"), ENTRY, "Take max(3, 4) and subtract 1.") is None


def test_short_values_and_text_that_is_not_arithmetic_are_left_alone() -> None:
    assert check(calc("4) - 1"), ENTRY, "x") is None  # too short to be a copied example
    note = PlanStep(step_id=2, tool_name="note", tool_input={"text": "{$step_1_result} - {$step_1_result} said"})
    assert check(note, "- note(text: str): Save a note.", "x") is None
    assert check(PlanStep(step_id=3, description="think"), ENTRY, "x") is None


figures = st.lists(st.integers(10, 10**7), min_size=2, max_size=4, unique=True)


@relaxed
@given(figures, st.sampled_from(["+", "-", "*", "/"]), st.booleans())
def test_arithmetic_on_figures_the_task_writes_is_never_asked_about(values: list[int], op: str,
                                                                   grouped: bool) -> None:
    written = " and ".join(f"{v:,}" if grouped else str(v) for v in values)
    expression = f"round({f' {op} '.join(map(str, values))}, 2)"
    assert check(calc_free(expression), ENTRY, f"Combine {written}.") is None


@relaxed
@given(figures)
def test_arithmetic_on_two_figures_from_nowhere_is_asked_about_unless_a_step_feeds_it(values: list[int]) -> None:
    expression = " - ".join(map(str, values))
    found = check(calc_free(expression), ENTRY, "Which team is larger, platform or payments?")
    assert found is not None and not found.copied and f"{values[0]} and {values[1]}" in found.reason
    assert check(calc(expression), ENTRY, "Which team is larger, platform or payments?") is None


def test_a_rounding_precision_and_one_constant_are_not_figures_from_nowhere() -> None:
    assert check(calc_free("round(1,971,689 / 2.5 * 100, 1)"), ENTRY, "1.971.689 und 2,5") is None
    assert check(calc_free("sum of 3 and 4"), ENTRY, "x") is None  # not arithmetic: left alone


def calc_free(expression: str) -> PlanStep:
    """A calculator step that depends on no step."""
    return PlanStep(step_id=1, tool_name="calculator", tool_input={"expression": expression})
