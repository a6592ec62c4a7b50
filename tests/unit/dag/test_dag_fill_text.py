"""``dag.refs.fill_text``: the references a text makes, filled from outputs where they can be and left written
where they cannot (the reviewer's answer, ``agents.roles.reflector.filled_answer``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dag.refs import fill_text


def test_every_spelling_of_a_reference_is_filled():
    outputs = {1: "Rome", 2: 1200, 3: {"total": 7.5}}
    assert fill_text("{$step_1_result} by $step_2_result, ${step_3_result.total} in all.", outputs) == \
        "Rome by 1200, 7.5 in all."


def test_a_whole_reference_becomes_the_output_as_text():
    assert fill_text(" $step_2_result\n", {2: -180000}) == " -180000\n"
    assert fill_text("$step_1_result", {1: [1, 2]}) == "[1,2]"


def test_a_reference_that_cannot_be_filled_stays_written_for_the_checks_to_see():
    assert fill_text("larger by {$step_4_result}", {1: 3}) == "larger by {$step_4_result}"
    assert fill_text("it is $step_1_result.total", {1: 3}) == "it is {$step_1_result.total}"


def test_money_and_other_dollar_text_is_left_alone():
    assert fill_text("It costs $5 and $step_one.", {5: "x"}) == "It costs $5 and $step_one."


@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=60))
def test_text_without_a_reference_comes_back_unchanged(text):
    assert fill_text(text, {1: "x"}) == text


@given(st.text(alphabet=st.characters(blacklist_characters="${}"), max_size=30),
       st.text(alphabet=st.characters(blacklist_characters="${}"), max_size=30),
       st.one_of(st.integers(), st.text(alphabet=st.characters(blacklist_characters="$"), max_size=20)))
def test_a_filled_reference_is_exactly_the_output_between_the_same_text(before, after, output):
    filled = fill_text(before + "{$step_7_result}" + after, {7: output})
    assert filled == before + str(output) + after
