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
    assert pattern.startswith('^[^"\\\\]*(') and pattern.endswith(')[^"\\\\]*$')
    assert not re.fullmatch(pattern, f'say "{value:.2f}"')


def test_a_figure_of_one_digit_has_no_pattern():
    assert figure_pattern(3.0) is None and figure_pattern(-7.0) is None
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
