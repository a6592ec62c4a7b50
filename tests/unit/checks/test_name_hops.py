"""When code may answer a name hop with its one hit's title (agents/checks/numeric/name_hops.py), and when the model must."""

from __future__ import annotations

from agents.checks.numeric.name_hops import title_answer
from planning.models import PlanStep

HOP = PlanStep(step_id=2, description="the name of the capital of the United Kingdom", depends_on=[1])
CALC = PlanStep(step_id=3, description="round", tool_name="calculator",
                tool_input={"expression": "round({$step_2_result})"}, depends_on=[2])
NUMBERS = lambda step: frozenset({2})  # noqa: E731 - the calculator takes step 2 as a number


def test_a_hit_that_states_its_figure_is_answered_with_its_title() -> None:
    hit = {"title": "London", "text": "London: Population: about 8.8 million at the 2021 census."}
    assert title_answer(HOP, [hit], [CALC], number_slots=NUMBERS) == "London"


def test_a_hit_with_no_figure_is_left_to_the_model() -> None:
    # the number the calculator wants is not on this page, so the name it needs is not the page's title
    hit = {"title": "United Kingdom", "text": "United Kingdom: a country in north-western Europe; its capital is London."}
    assert title_answer(HOP, [hit], [CALC], number_slots=NUMBERS) is None


def test_a_name_that_feeds_a_search_is_left_to_the_model() -> None:
    search = PlanStep(step_id=3, description="population", tool_name="doc_search",
                      tool_input={"query": "{$step_2_result} population"}, depends_on=[2])
    hit = {"title": "Italy", "text": "Italy: 59 million people; its capital is Rome."}
    assert title_answer(HOP, [hit], [search], number_slots=lambda step: frozenset()) is None
