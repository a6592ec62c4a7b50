"""Plan templates: extraction, the exact round trip (property), matching, filling and non-matching shapes."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.memory.literals import extract_literals, shape_key
from agents.memory.plan_cache import Adapt, NoMatch, extract_template, fill, plan_reuse
from planning.models import Plan
from support.tiers import examples

NAMES = ["Paris", "Rome", "New York", "São Paulo", "Mont Blanc", "Berlin", "Ulaanbaatar", "K2"]
WORDS = ["population", "of", "and", "the", "height", "compare", "bigger", "how", "many", "with", "in", "km"]


def _plan(*steps):
    return Plan.model_validate({"steps": [
        {"step_id": i, "description": d, "tool_name": t, "tool_input": inp, "depends_on": deps}
        for i, (d, t, inp, deps) in enumerate(steps, start=1)]})


def _dump(plan: Plan) -> str:
    return json.dumps(plan.model_dump(), sort_keys=False)


fragment = st.one_of(st.sampled_from(NAMES), st.sampled_from(WORDS),
                     st.integers(-5000, 5000).map(str), st.floats(0, 1000, allow_nan=False).map(lambda f: f"{f:.2f}"),
                     st.sampled_from(NAMES + WORDS).map(lambda w: f'"{w} {w}"'), st.sampled_from(["?", ",", "."]))


@st.composite
def task_and_plan(draw):
    task = " ".join(draw(st.lists(fragment, min_size=1, max_size=12)))
    pieces = [lit.text for lit in extract_literals(task)] + WORDS + ["paris", "ROME"]
    scalar = st.one_of(
        st.sampled_from(pieces),
        st.lists(st.sampled_from(pieces + ["{$step_1_result}", "$step_1_result.city", " ", "-"]), max_size=5)
        .map("".join),
        st.integers(-5000, 5000), st.floats(-1000, 1000, allow_nan=False).filter(lambda f: str(f) != "-0.0"), st.booleans(), st.none())
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.sampled_from(["a", "b", "c"]), inner,
                                                                         max_size=3)), max_leaves=8)
    n = draw(st.integers(1, 4))
    steps = [(draw(st.sampled_from(pieces + [""])), draw(st.sampled_from(["lookup", "calculator", None])),
              draw(st.dictionaries(st.sampled_from(["city", "expression", "query", "k"]), value, max_size=3)),
              sorted(draw(st.sets(st.integers(1, i - 1), max_size=2))) if i > 1 else []) for i in range(1, n + 1)]
    return task, _plan(*steps)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_and_plan())
def test_a_template_filled_with_its_own_task_reproduces_the_plan_exactly(case):
    task, plan = case
    template = extract_template(task, plan)
    again = fill(template, task)
    assert again is not None and again == plan and _dump(again) == _dump(plan)


CITY_PLAN = _plan(
    ("population of Paris", "lookup", {"city": "Paris"}, []),
    ("population of Rome", "lookup", {"city": "Rome"}, []),
    ("how much bigger Paris is", "calculator", {"expression": "{$step_1_result} - {$step_2_result}"}, [1, 2]))


def test_same_shape_is_filled_by_code_with_the_new_literals():
    template = extract_template("Which is bigger, Paris or Rome, and by how much?", CITY_PLAN)
    assert [s.example for s in template.slots] == ["Paris", "Rome"] and template.fillable
    plan = fill(template, "which is bigger, New York or São Paulo, and by how much")
    assert [s.tool_input for s in plan.steps[:2]] == [{"city": "New York"}, {"city": "São Paulo"}]
    assert [s.description for s in plan.steps] == ["population of New York", "population of São Paulo",
                                                   "how much bigger New York is"]
    assert plan.steps[2].tool_input == {"expression": "{$step_1_result} - {$step_2_result}"}


def test_numbers_fill_json_numbers_of_the_same_type_and_never_touch_step_refs():
    plan = _plan(("top 3 about Rome", "doc_search", {"query": "Rome", "k": 3}, []),
                 ("scale", "calculator", {"expression": "{$step_1_result} * 3"}, [1]))
    template = extract_template("Find the top 3 passages about Rome", plan)
    filled = fill(template, "Find the top 5 passages about Berlin")
    assert filled.steps[0].tool_input == {"query": "Berlin", "k": 5}
    assert filled.steps[1].tool_input == {"expression": "{$step_1_result} * 5"}
    reuse = plan_reuse(template, "Find the top 2.5 passages about Berlin")  # k is an int: code must not guess
    assert isinstance(reuse, Adapt) and "whole number" in reuse.reason and "<<number_1>>" in reuse.guidance


def test_different_shapes_and_different_constants_do_not_match():
    template = extract_template("Which is bigger, Paris or Rome, and by how much?", CITY_PLAN)
    for other in ["How far is Paris from Rome?", "Which is bigger, Paris or Rome or Berlin, and by how much?",
                  "Which is bigger, Paris or 7, and by how much?", "Which is older, Paris or Rome, and by how much?"]:
        assert isinstance(plan_reuse(template, other), NoMatch) and fill(template, other) is None
    # A literal the plan does not use is a constant of the shape: "2020" must be repeated to match.
    template = extract_template("Population of Paris in 2020", _plan(("p", "lookup", {"city": "Paris"}, [])))
    assert fill(template, "Population of Rome in 2020").steps[0].tool_input == {"city": "Rome"}
    assert isinstance(plan_reuse(template, "Population of Rome in 1990"), NoMatch)


def test_ambiguous_mappings_go_to_the_planner_with_the_template():
    plan = _plan(("p", "lookup", {"city": "Paris"}, []), ("q", "lookup", {"city": "Paris"}, []))
    template = extract_template("Compare Paris with Paris", plan)  # one slot, two positions
    reuse = plan_reuse(template, "Compare Rome with Berlin")
    assert isinstance(reuse, Adapt) and "would be both" in reuse.reason
    assert "<<name_1>> = 'Rome'" in reuse.guidance and "<<name_1>> = 'Berlin'" in reuse.guidance
    assert fill(template, "Compare Rome with Rome").steps[1].tool_input == {"city": "Rome"}
    # The plan also spells the literal in another case: code would leave "paris" behind, so it must not fill.
    plan = _plan(("p", "doc_search", {"query": "Paris", "hint": "paris population"}, []))
    template = extract_template("Population of Paris", plan)
    assert not template.fillable and "'paris'" in template.reason
    assert isinstance(plan_reuse(template, "Population of Rome"), Adapt)
    assert fill(template, "Population of  Paris?") == plan  # same values: nothing to substitute


def test_literal_extraction_and_shape_key():
    assert [l.text for l in extract_literals("Compare Paris's Louvre and the Mont Blanc Tunnel")] == \
        ["Compare", "Paris", "Louvre", "Mont Blanc Tunnel"]
    assert shape_key("Compare  PARIS and Rome!") == shape_key("Compare Oslo and Rome") == "<name> <name> and <name>"
    assert shape_key("top 3 of 'x'") == "top <number> of <quoted>"
