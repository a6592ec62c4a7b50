"""The answer-only reply and the pattern that holds it to a figure (planning/written_answer.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning.errors import PlanningError
from planning.written_answer import ANSWER_CHARS, figure_pattern, parse_written_answer, written_answer_schema

FIGURES = st.floats(min_value=10, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(FIGURES, st.sampled_from(["{:.2f}", "{:,.2f}", "{:.1f}", "{:,.0f}"]), st.booleans())
def test_an_answer_writing_the_figure_rounded_or_grouped_matches(value, form, negative):
    if value == int(value):
        form = "{:,.0f}" if "," in form else "{:.0f}"
    text = form.format(value)
    if text.rstrip("0").endswith("."):  # "12.0" rounded to a whole number is written "12"
        text = text.split(".")[0]
    figure = -value if negative else value
    assert re.fullmatch(figure_pattern(figure), f"It changed by {'-' if negative else ''}{text} in all.")


@given(FIGURES)
def test_an_answer_with_no_digit_never_matches(value):
    assert not re.fullmatch(figure_pattern(value), "The larger one is Rome, by a lot.")


@given(FIGURES)
def test_the_pattern_is_one_json_string_body(value):
    # No quote or backslash outside the figure: what the server writes stays one JSON string.
    pattern = figure_pattern(value)
    assert '"' not in pattern.replace('^"', "").replace('[^"', "")
    assert not re.fullmatch(pattern, f'say "{value:.2f}"')
    assert not re.fullmatch(pattern, f"say {value:.2f} \\ or so")


@given(st.integers(min_value=1, max_value=10**7), st.sampled_from(["{}", "{:,}"]), st.integers(0, 9))
def test_a_whole_figure_stands_as_a_number_of_its_own(value, form, digit):
    text = form.format(value)
    pattern = figure_pattern(float(value))
    assert re.fullmatch(pattern, f"{text}") and re.fullmatch(pattern, f"By {text}.0, in all.")
    assert not re.fullmatch(pattern, f"By {digit}{text} in all."), "a digit before it writes another number"
    assert not re.fullmatch(pattern, f"By {text}{digit} in all."), "a digit after it writes another number"
    if digit:
        assert not re.fullmatch(pattern, f"By {text}.{digit} in all."), "so does a fraction that is not zeros"
    assert not re.fullmatch(pattern, f"By {text}.000 in all."), "a thousands group: 3.000 is 3000 in German"


def test_a_figure_of_one_digit_is_held_to_as_a_number():
    assert [bool(re.fullmatch(figure_pattern(-7.0), a)) for a in ("-7", "It fell by 7 ms.", "17 ms", "7.5 ms")] \
        == [True, True, False, False]
    assert figure_pattern(float("nan")) is None and figure_pattern(0.0) is None
    assert not re.fullmatch(figure_pattern(0.0012), "It is 0.0 or so."), "a rounding to zeros says nothing"
    assert re.fullmatch(figure_pattern(0.660694576805), "About 0.66 times.")
    assert not re.fullmatch(figure_pattern(0.660694576805), "About 1 time.")


def test_the_schema_holds_the_answer_to_the_pattern_only_when_given():
    assert "pattern" not in written_answer_schema()["properties"]["answer"]
    assert written_answer_schema("^a$")["properties"]["answer"]["pattern"] == "^a$"
    assert written_answer_schema()["properties"]["answer"]["maxLength"] == ANSWER_CHARS


def test_the_reply_is_read_or_refused_with_what_to_do():
    assert parse_written_answer('{"answer": " Rome, by 0.7 million. ", "note": "x"}') == "Rome, by 0.7 million."
    with pytest.raises(PlanningError, match='"answer" is empty'):
        parse_written_answer('{"answer": "  "}')
    with pytest.raises(PlanningError):
        parse_written_answer('{"answer": "' + "x" * (ANSWER_CHARS + 1) + '"}')
    with pytest.raises(PlanningError):
        parse_written_answer("Rome, by 0.7 million.")


def test_the_figure_comes_early_and_apart_from_words():
    # Left free, the small model wrote on around the figure until its tokens ran out: the figure must come within
    # the first 200 characters, after a space, a bracket, a currency or a sign.
    pattern = figure_pattern(6.0)
    assert re.fullmatch(pattern, "x" * 198 + " 6 more.") and not re.fullmatch(pattern, "x" * 200 + " 6 more.")
    assert [bool(re.fullmatch(pattern, a)) for a in ("respectively6", "(6)", "€6", "−6 ms", "by 6%")] \
        == [False, True, True, True, True]
