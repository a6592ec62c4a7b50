"""The grammar walk that drafts a reply's forced text: it drafts only what the grammar allows, stops where the
model has a choice, and lays optional spaces out as ``json.dumps`` does."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from support.tiers import examples

from agents.llm.local._jump_forward import END, forced_run


class _Language:
    """A grammar given as the set of its whole replies: what may follow a prefix is read off the replies it
    starts."""

    def __init__(self, replies: set[str], written: str) -> None:
        self.replies, self.written = replies, written

    def allowed(self) -> frozenset[str]:
        n = len(self.written)
        starts = [r for r in self.replies if r.startswith(self.written)]
        return frozenset(END if len(r) == n else r[n] for r in starts)

    def accept(self, char: str) -> None:
        assert char in self.allowed(), f"{char!r} drafted where the grammar allows {sorted(self.allowed())}"
        self.written += char


def _walk(replies: set[str], written: str, limit: int = 64) -> str:
    language = _Language(replies, written)
    return forced_run(language.allowed, language.accept, last=written[-1:], limit=limit)


def _spacings(compact: str) -> set[str]:
    """``compact`` with an optional space after every ``{ : ,`` (what a JSON-schema grammar allows)."""
    out = {""}
    for char in compact:
        out = {o + char for o in out} | ({o + char + " " for o in out} if char in "{:," else set())
    return out


def test_the_keys_of_a_fixed_object_are_drafted_up_to_the_free_value():
    replies = set().union(*(_spacings(f'{{"action":"{a}","answer":"{b}"}}') for a in ("accept", "replan")
                            for b in ("x", "y")))
    # Spaces as json.dumps lays them out, up to where the model picks the action.
    assert _walk(replies, "{") == '"action": "'
    assert _walk(replies, '{"action": "accept"') == ', "answer": "'


def test_a_walk_stops_where_the_model_chooses():
    replies = {'{"a": true}', '{"a": false}'}
    assert _walk(replies, '{"a": ') == ""
    assert _walk(replies, '{"a": t') == "rue}"


def test_a_walk_leaves_the_space_before_a_value_to_the_model():
    # A space is written with the word after it (" 5" is one token), so a draft never ends in one.
    replies = {'{"n": 5}', '{"n": 6}'}
    assert _walk(replies, "{") == '"n":'


def test_a_walk_ends_where_the_reply_may_end():
    assert _walk({"{}", "{} "}, "{") == "}"
    assert _walk({"ab", "abc"}, "a") == "b"  # then the end or "c": nothing is drafted past a possible end


def test_a_walk_keeps_to_its_limit():
    assert _walk({"x" * 100}, "x", limit=10) == "x" * 10


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "bb", "c"]), st.sampled_from([1, 22, "s", True, None]),
                                min_size=1, max_size=3), min_size=1, max_size=4), st.data())
def test_a_draft_is_always_text_the_grammar_allows(objects, data):
    replies = set().union(*(_spacings(json.dumps(o, separators=(",", ":"))) for o in objects))
    reply = data.draw(st.sampled_from(sorted(replies)))
    written = reply[:data.draw(st.integers(1, len(reply)))]
    drafted = _walk(replies, written)  # _Language.accept refuses any character the grammar does not allow
    assert not drafted.endswith(" ")
    assert any(r.startswith(written + drafted) for r in replies)
