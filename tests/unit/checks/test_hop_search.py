"""The search a name hop left out, written by code from the plan itself (no Ray, no model)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.checks.numeric.hop_search import NameHop, add_hop_searches, quantity_words
from dag.refs import compile_value, references
from planning.models import Plan, PlanStep


def _step(sid, tool=None, deps=(), **tool_input):
    return PlanStep(step_id=sid, description=f"step {sid}", tool_name=tool, tool_input=tool_input,
                    depends_on=list(deps))


HOP = [_step(1, "doc_search", query="capital of Spain", k=1), _step(2, None, (1,))]


@pytest.mark.parametrize("expression, task, words", [
    ("{$step_2_result} area", "What area does the capital of Spain cover?", "area"),
    ("round($step_2_result['figures']['population'])", "How many people live in the capital of Spain?", "population"),
    ("{$step_2_result} * 2", "What is twice the height of the tallest tower in Spain?", "height tallest tower"),
])
def test_the_quantity_comes_from_the_call_else_from_the_task(expression, task, words):
    assert quantity_words(_step(3, "calculator", (2,), expression=expression), task, "capital of Spain") == words


def test_subscripted_references_are_replaced_whole():
    plan = Plan(steps=[*HOP, _step(3, "calculator", (2,), expression="round($step_2_result['population'])")])
    fixed = add_hop_searches(plan, [NameHop(3, 2, 1)], "How many people live in the capital of Spain?")
    assert fixed is not None
    assert [(s.step_id, s.tool_input, s.depends_on) for s in fixed.steps[2:]] == [
        (4, {"query": "{$step_2_result} population", "k": 1}, [2]),
        (3, {"expression": "round({$step_4_result})"}, [4])]  # written as dag.refs writes a reference in text


@pytest.mark.parametrize("expression", ["${step_2_result} / 2", "{$step_2_result.name} / 2", "$step_2_result / 2"])
def test_every_spelling_of_a_reference_is_pointed_at_the_search(expression):
    plan = Plan(steps=[*HOP, _step(3, "calculator", (2,), expression=expression)])
    fixed = add_hop_searches(plan, [NameHop(3, 2, 1)], "What is half the area of the capital of Spain?")
    assert fixed is not None and fixed.steps[-1].tool_input == {"expression": "{$step_4_result} / 2"}


def test_what_used_a_dropped_call_uses_the_search_and_a_hop_that_does_not_hold_goes_to_the_planner():
    # dev multi-hop-11: calculator("count($step_2_result)"), then a reasoning step over step 3.
    plan = Plan(steps=[*HOP, _step(3, "calculator", (2,), expression="count($step_2_result)"),
                       _step(4, None, (3,)), _step(5, "calculator", (3,), expression="{$step_3_result} * 2")])
    fixed = add_hop_searches(plan, [NameHop(3, 2, 1)], "How many people live in the capital of Spain?")
    assert fixed is not None
    assert [(s.step_id, s.tool_input, s.depends_on) for s in fixed.steps[2:]] == [
        (6, {"query": "{$step_2_result} population", "k": 1}, [2]), (4, {}, [6]),
        (5, {"expression": "{$step_6_result} * 2"}, [6])]
    assert add_hop_searches(plan, [NameHop(3, 2, 9)], "t") is None  # no such search step
    no_text = Plan(steps=[_step(1, "lookup", id=7), _step(2, None, (1,)),
                          _step(3, "calculator", (2,), expression="{$step_2_result} area")])
    assert add_hop_searches(no_text, [NameHop(3, 2, 1)], "t") is None


@given(st.sampled_from(["{$step_2_result} area", "{$step_2_result} / 1000", "round({$step_2_result}, 1)",
                        "$step_2_result", "{$step_2_result} - {$step_1_result}"]),
       st.sampled_from(["What area does the capital of Spain cover?", "How tall is the tower in Paris?", ""]))
def test_every_step_comes_after_what_it_uses_and_uses_only_what_it_waits_for(expression, task):
    plan = Plan(steps=[*HOP, _step(3, "calculator", (1, 2) if "step_1" in expression else (2,),
                                   expression=expression)])
    fixed = add_hop_searches(plan, [NameHop(3, 2, 1)], task)
    assert fixed is not None
    seen: set[int] = set()
    for step in fixed.steps:
        assert set(step.depends_on) <= seen
        assert references(compile_value(step.tool_input)) <= set(step.depends_on)
        seen.add(step.step_id)
    assert 2 not in {d for s in fixed.steps if s.tool_name == "calculator" for d in s.depends_on}


def test_a_search_written_as_arithmetic_is_replaced_by_the_search():
    # dev multi-hop-03 with planner/v9: calculator("count(population) in {$step_2_result}") for "How many people
    # live in the capital of Spain?"
    plan = Plan(steps=[*HOP, _step(3, "calculator", (2,), expression="count(population) in {$step_2_result}")])
    fixed = add_hop_searches(plan, [NameHop(3, 2, 1)], "How many people live in the capital of Spain?")
    assert fixed is not None
    assert [(s.step_id, s.tool_name, s.tool_input) for s in fixed.steps] == [
        (1, "doc_search", {"query": "capital of Spain", "k": 1}), (2, None, {}),
        (4, "doc_search", {"query": "{$step_2_result} population", "k": 1})]


def test_only_a_name_read_from_one_search_counts_and_every_rejected_call_must_have_one():
    from agents.checks.numeric.hop_search import unsearched_hops

    steps = [*HOP, _step(3, "calculator", (2,), expression="{$step_2_result} area"),
             _step(4, "lookup", (), id=1), _step(5, "calculator", (4,), expression="{$step_4_result} area")]
    slots = lambda step: frozenset(step.depends_on)  # noqa: E731 - every dependency is a number slot here
    assert unsearched_hops(steps, {2: "Madrid"}, [3], slots) == [NameHop(3, 2, 1)]
    assert unsearched_hops(steps, {2: "about 3.3 million"}, [3], slots) == []  # a figure, not a name
    assert unsearched_hops(steps, {2: "Madrid"}, [3, 5], slots) == []  # step 5 read a tool step, not a name
