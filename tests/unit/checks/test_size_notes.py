"""Lists counted by code (``agents.checks.order``): the number of items each list a step returned holds, and the
order of one tool's lists by length. Notes only: they state what code counted, never veto."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from agents.checks.facts import Result, Severity
from agents.checks.order import order_notes, size_notes
from agents.checks.sound import result_notes

NAMES = st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=8), max_size=12)


@given(NAMES, st.booleans())
def test_the_count_is_the_lists_length_whether_it_came_as_a_list_or_as_json_text(items, as_text):
    output = json.dumps(items) if as_text else items
    notes = size_notes([Result(1, "team_members", "members", output, arguments="payments")])
    if len(items) < 2:
        assert notes == []
    else:
        assert notes[0].text == f"Counted by code: #1 (payments) lists {len(items)} items."
        assert notes[0].severity is Severity.NOTE


@given(NAMES, NAMES)
def test_one_tools_lists_are_ordered_by_their_true_lengths(a, b):
    steps = [Result(1, "team_members", "", a, arguments="platform"),
             Result(2, "team_members", "", json.dumps(b), arguments="payments")]
    text = order_notes(steps)[0].text
    assert f"#1 (platform) lists {len(a)} item" in text and f"#2 (payments) lists {len(b)} item" in text
    if len(a) == len(b):
        assert "they are equal" in text
    else:
        longer, shorter = ("#1 (platform)", "#2 (payments)") if len(a) > len(b) else ("#2 (payments)", "#1 (platform)")
        assert f"{longer} is longer than {shorter}" in text
    assert size_notes(steps) == []  # compared already: not counted twice


def test_text_that_is_not_a_list_and_failed_steps_are_not_counted():
    assert size_notes([Result(1, "search", "", "[citation needed] three names"),
                       Result(2, "team", "", None, failed=True),
                       Result(3, "rows", "", {"a": [1, 2, 3]})]) == []


def test_the_count_reaches_the_reviewer_among_the_sound_sets_notes():
    notes = result_notes("How many people are in the payments team?",
                         [Result(1, "team_members", "", ["Ana", "Luis", "Eva"], arguments="payments")])
    assert any(re.fullmatch(r"Counted by code: #1 \(payments\) lists 3 items\.", n.text) for n in notes)
