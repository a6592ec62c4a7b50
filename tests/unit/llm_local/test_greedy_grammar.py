"""The grammar check's fast path picks what greedy sampling over the grammar-filtered vocabulary picks."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.llm.local._greedy_grammar import best_allowed, checked_greedy
from support.tiers import examples

logits_lists = st.lists(st.sampled_from([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0]), min_size=1, max_size=12)


def _run(logits: list[float], allowed: set[int]) -> tuple[int, bool, int]:
    array = np.array(logits, dtype=np.single)
    checks = []

    def allows(token: int) -> bool:
        checks.append(token)
        return token in allowed

    def filter_all() -> None:
        array[[t for t in range(len(array)) if t not in allowed]] = -math.inf

    token, filtered = checked_greedy(array, allows, filter_all)
    return token, filtered, len(checks)


@settings(max_examples=examples(300), deadline=None)
@given(logits_lists, st.data())
def test_the_fast_path_picks_the_best_allowed_token(logits, data):
    allowed = data.draw(st.sets(st.integers(0, len(logits) - 1), min_size=1))
    token, filtered, checks = _run(logits, allowed)
    assert token == best_allowed(logits, lambda t: t in allowed)
    assert checks == 1  # one token checked, whatever the vocabulary's size
    assert filtered == (int(np.argmax(logits)) not in allowed)


def test_ties_go_to_the_lowest_token_id_as_in_llama_cpp():
    assert _run([1.0, 3.0, 3.0, 0.0], {1, 2, 3})[0] == 1
    assert _run([1.0, 3.0, 3.0, 0.0], {0, 2})[0] == 2


def test_an_allowed_best_token_never_filters_the_vocabulary():
    assert _run([0.0, 5.0, 1.0], {1}) == (1, False, 1)
    assert _run([0.0, 5.0, 1.0], {0, 2}) == (2, True, 1)
