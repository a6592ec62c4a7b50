"""Which figure a ratio task puts on top, the check of a computed ratio against it, and the rewritten step."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.checks.facts import Result, Severity
from agents.checks.numeric import check_results, ratio_fault
from agents.checks.numeric.ratio import AskedRatio, asked_ratio, describe, ratio_expression, rewrite_ratio, side_of
from planning.models import Plan, PlanStep


@pytest.mark.parametrize(("task", "top", "bottom", "percent"), [
    ("How many times larger is the area of Istanbul than that of London? Give two decimals.",
     "the area of Istanbul", "that of London", False),
    ("How many times longer is the Nile than the Thames?", "the Nile", "the Thames", False),
    ("How many times more populous is Tokyo than Paris?", "Tokyo", "Paris", False),
    ("What percentage of the height of Mount Everest is the height of the Empire State Building? Give one decimal.",
     "the height of the Empire State Building", "the height of Mount Everest", True),
    ("What fraction of the area of France is the area of Paris?", "the area of Paris", "the area of France", False),
    ("Express the population of Paris as a percentage of the population of France.",
     "the population of Paris", "the population of France", True),
    ("The population of Paris is what percent of that of France?", "The population of Paris", "that of France", True),
    ("What is the ratio of the Nile's length to the Rhine's length, to two decimals?",
     "the Nile's length", "the Rhine's length", False),
])
def test_the_task_s_words_say_which_figure_is_on_top(task, top, bottom, percent):
    assert asked_ratio(task) == AskedRatio(top, bottom, percent)


@pytest.mark.parametrize("task", [
    "How many more people live in Rome than in Paris?",
    "What is the total population of Paris and Rome?",
    "Which river is longer, the Nile or the Rhine?",
    "How many times did France win the World Cup?",
])
def test_no_ratio_is_read_into_other_tasks(task):
    assert asked_ratio(task) is None


def test_a_side_is_told_apart_by_the_words_only_its_phrase_has():
    asked = AskedRatio("the area of Rome", "that of the United Kingdom", False)
    assert side_of(asked, "Rome") == "numerator"
    assert side_of(asked, "United Kingdom") == "denominator"
    assert side_of(asked, "Paris") is None
    # Words both phrases share ("area") name neither side.
    assert side_of(AskedRatio("the area of Rome", "the area of Paris", False), "Area") is None


def passage(step: int, title: str, quantity: str, text: str) -> Result:
    return Result(step, "doc_search", f"{quantity} of {title}", [{"title": title, "text": f"{title}: {text}"}],
                  about=f"{quantity} of {title}")


ROME = passage(1, "Rome", "area", "Area: the city covers about 1,285 km².")
UK = passage(2, "United Kingdom", "area", "Area: the country covers about 243,610 km².")
TIMES = "How many times larger is the area of Rome than that of the United Kingdom? Give two decimals."


def computed(step: int, value: float, deps: tuple[int, ...] = (1, 2), expression: str = "") -> Result:
    return Result(step, "calculator", "ratio", value, depends_on=deps, arguments=expression)


def test_a_ratio_the_wrong_way_round_is_a_contradiction_naming_the_asked_figure():
    fault = ratio_fault(TIMES, [ROME, UK, computed(3, 243_610 / 1_285)])
    assert fault is not None and fault.reversed
    assert (fault.numerator_steps, fault.denominator_steps) == ((1,), (2,))
    assert math.isclose(fault.expected[0], 1_285 / 243_610)
    texts = [f.text for f in check_results(TIMES, [ROME, UK, computed(3, 243_610 / 1_285)])
             if f.severity is Severity.CONTRADICTION]
    assert len(texts) == 1 and "wrong way round" in texts[0] and "0.005275" in texts[0]


@pytest.mark.parametrize("value", [1_285 / 243_610, 0.01, 0.005, 0.0053])
def test_the_asked_ratio_passes_rounded_as_the_task_asks(value):
    assert ratio_fault(TIMES, [ROME, UK, computed(3, value)]) is None


def test_a_figure_typed_in_instead_of_a_side_s_result_is_a_contradiction():
    everest = passage(1, "Mount Everest", "height", "Height: 8,848.86 m, as measured in 2020.")
    building = passage(2, "Empire State Building", "height", "Height: 381 m to the roof.")
    task = "What percentage of the height of Mount Everest is the height of the Empire State Building?"
    fault = ratio_fault(task, [everest, building, computed(3, 8_848.86 / 3_083 * 100, deps=(1,))])
    assert fault is not None and not fault.reversed
    assert [round(v, 2) for v in fault.expected] == [4.31]
    assert "typed in" in [f.text for f in check_results(task, [everest, building, computed(
        3, 8_848.86 / 3_083 * 100, deps=(1,))]) if f.severity is Severity.CONTRADICTION][0]


def test_silent_when_a_side_has_no_figure_or_the_step_used_stated_numbers():
    assert ratio_fault(TIMES, [ROME, computed(3, 2.0, deps=(1,))]) is None  # no figure for the UK
    two = passage(2, "United Kingdom", "area", "Area: 243,610 km² (2011); with its waters about 250,000 km².")
    # A number each side's passage states: a candidate the passage reading missed, not a misread.
    assert ratio_fault(TIMES, [ROME, two, computed(3, 1_285 / 250_000)]) is None


def test_a_ratio_through_a_third_passage_is_a_contradiction():
    # Dev arithmetic-15: a search for "area of 505990" found Tokyo, whose area the step divided by Vienna's.
    spain = passage(1, "Spain", "area", "Area: Spain covers about 505,990 km².")
    vienna = passage(2, "Vienna", "area", "Area: the city covers about 414.9 km².")
    tokyo = passage(4, "Tokyo", "area", "Area: the metropolis covers about 2,194 km².")
    task = "How many times larger is the area of Spain than that of Vienna? Give two decimals."
    fault = ratio_fault(task, [spain, vienna, tokyo, computed(6, 2_194 / 414.9, deps=(4, 2))])
    assert fault is not None and not fault.reversed and [round(v, 1) for v in fault.expected] == [1219.5]
    assert ratio_fault("How many more km² does Rome cover than the UK?", [ROME, UK, computed(3, 5.0)]) is None


@given(top=st.floats(1, 1e7), bottom=st.floats(1, 1e7), percent=st.booleans())
def test_the_asked_division_never_faults_and_its_reverse_does_unless_they_agree(top, bottom, percent):
    task = ("What percentage of the area of the United Kingdom is the area of Rome?" if percent else TIMES)
    rome = passage(1, "Rome", "area", f"Area: the city covers about {top:.2f} km².")
    uk = passage(2, "United Kingdom", "area", f"Area: the country covers about {bottom:.2f} km².")
    a, b = round(top, 2), round(bottom, 2)
    scale = 100 if percent else 1
    assert ratio_fault(task, [rome, uk, computed(3, a / b * scale)]) is None
    reverse = ratio_fault(task, [rome, uk, computed(3, b / a * scale)])
    if not math.isclose(a / b, b / a, rel_tol=0.02):
        assert reverse is not None and reverse.reversed


def test_the_rewritten_step_divides_the_asked_way_and_only_once():
    plan = Plan(steps=[PlanStep(step_id=1, tool_name="doc_search", tool_input={"query": "area of Rome"}),
                       PlanStep(step_id=2, tool_name="doc_search", tool_input={"query": "area of the UK"}),
                       PlanStep(step_id=3, description="the name", depends_on=[1]),
                       PlanStep(step_id=4, tool_name="calculator", depends_on=[3, 2], tool_input={
                           "expression": "max({$step_3_result}, {$step_2_result}) / min({$step_3_result}, "
                                         "{$step_2_result})"})])
    fault = ratio_fault(TIMES, [ROME, UK, Result(3, None, "the name", "Rome", depends_on=(1,)),
                                computed(4, 243_610 / 1_285, deps=(3, 2))])
    assert fault is not None and fault.step == 4
    fixed = rewrite_ratio(plan, fault)
    assert fixed is not None
    assert fixed.step(4).tool_input == {"expression": ratio_expression(fault.asked, 1, 2)}
    assert fixed.step(4).depends_on == [1, 2]
    assert [s.step_id for s in fixed.steps] == [1, 2, 3, 4]
    assert rewrite_ratio(fixed, fault) is None  # already the asked expression: never rewritten twice
    assert describe(fault).startswith("Checked by code: the task asks for Rome's figure over United Kingdom's")


def test_a_ratio_answer_must_state_the_ratio_the_plan_computed():
    from agents.checks.numeric import answer_faults

    spain = passage(1, "Spain", "area", "Area: Spain covers about 505,990 km².")
    vienna = passage(2, "Vienna", "area", "Area: the city covers about 414.9 km².")
    task = "How many times larger is the area of Spain than that of Vienna? Give two decimals."
    results = [spain, vienna, computed(3, 505_990 / 414.9)]
    faults = answer_faults("Spain's area is about 1.28 times Vienna's.", results, task=task)
    assert "The task asks for a ratio, and step 3 computed 1,220 for it" in [f.text[:59] for f in faults]
    assert answer_faults("Spain is about 1,219.55 times larger than Vienna.", results, task=task) == ()
    assert answer_faults("About 1220 times.", results, task=task) == ()
    # A wrong ratio is the results' contradiction (replanned or rewritten), not one more for the answer.
    assert answer_faults("About 0.01 times.", [spain, vienna, computed(3, 414.9 / 505_990)], task=task) == ()
