"""A "clarify" is overruled only for a task that names what it asks about and points at nothing else
(agents/checks/numeric/referents.py, the opt-in numeric set): the regression set's clarify cases must keep it,
named comparisons must not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.checks.numeric.referents import named_only, planned_route
from planning.models import RouterDecision

CASES = Path(__file__).parents[3] / "benchmarks" / "prompt_regression" / "cases" / "router.jsonl"


def test_no_clarify_case_of_the_regression_set_is_overruled():
    clarify = [c["task"] for c in map(json.loads, CASES.read_text().splitlines()) if c["expected"] == "clarify"]
    assert len(clarify) >= 4
    assert [named_only(task) for task in clarify] == [()] * len(clarify)


@pytest.mark.parametrize(("task", "names"), [
    ("Which covers the larger area, Cairo or France?", ("Cairo", "France")),
    ("Which is bigger by area: France or Madrid?", ("France", "Madrid")),
    ("How many times larger is the area of Spain than that of Vienna? Give two decimals.", ("Spain", "Vienna")),
    ("How much taller is Mount Everest than K2, in metres?", ("Mount Everest", "K2")),
])
def test_a_task_that_names_what_it_asks_about_is_planned(task, names):
    assert named_only(task) == names
    assert planned_route(RouterDecision(route="clarify", confidence=0.95), 0.6, task) == "plan"


@pytest.mark.parametrize("task", [
    "How big is it compared to Paris?",
    "Do the same for Madrid as last time.",
    "Which of these is older, Rome or the other one?",
    "Fix the file Berlin sent.",
    "what is bigger?",
])
def test_a_task_that_points_elsewhere_or_names_nothing_keeps_its_clarify(task):
    assert named_only(task) == ()
    assert planned_route(RouterDecision(route="clarify", confidence=0.95), 0.6, task) == "clarify"


@given(st.sampled_from(["it", "them", "those", "the other", "last time", "the file"]),
       st.lists(st.sampled_from(["Paris", "Rome", "Mount Fuji", "the Nile", "larger", "area"]), min_size=1))
def test_any_pointing_word_keeps_a_clarify(pointer, words):
    task = f"Compare {' and '.join(words)} with {pointer}, please."
    assert planned_route(RouterDecision(route="clarify", confidence=0.9), 0.6, task) == "clarify"


def test_other_routes_are_left_to_the_model_and_the_confidence_rule():
    task = "Which is taller, K2 or Denali?"
    assert planned_route(RouterDecision(route="direct", confidence=0.9), 0.6, task) == "direct"
    assert planned_route(RouterDecision(route="plan", confidence=0.3), 0.6, task) == "clarify"
