"""The one plural folding word matchers share (the subject hint, the numeric checks, doc_search's index)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning.words import singular


@pytest.mark.parametrize(("word", "folded"), [
    ("cities", "city"), ("rivers", "river"), ("suites", "suite"), ("ties", "tie"),
    ("glass", "glass"), ("bus", "bus"), ("its", "its"), ("2010", "2010"), ("city", "city"),
])
def test_a_plural_meets_its_singular(word: str, folded: str) -> None:
    assert singular(word) == folded


@given(st.text(alphabet="abcisy0", max_size=12))
def test_folding_twice_changes_nothing_more_and_short_words_stay(word: str) -> None:
    assert singular(singular(word)) == singular(word)
    if len(word) <= 3:
        assert singular(word) == word
