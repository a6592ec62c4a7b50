"""The package's templates are resolved once and short texts' token counts remembered: the result must be
what an uncached call returns, and a user's own template directory is still listed on every load."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prompts import load_prompt
from prompts.registry import PromptRegistry
from prompts.tokens import _CACHED_TEXT_CHARS, count_tokens, get_encoding
from support.tiers import examples


def test_the_package_registry_resolves_once_and_a_user_registry_each_time(tmp_path):
    assert load_prompt("router") is load_prompt("router")
    (tmp_path / "x").mkdir()
    text = "# name: x\n# version: {v}\n=== system\nsystem {v}\n=== user\nuser"
    (tmp_path / "x" / "v1.txt").write_text(text.format(v=1))
    registry = PromptRegistry(tmp_path)
    assert registry.load("x").version == "v1"
    (tmp_path / "x" / "v2.txt").write_text(text.format(v=2))
    assert registry.load("x").version == "v2"  # not fixed: a version added later is the newest


@settings(max_examples=examples(50), deadline=None)
@given(st.text(max_size=200))
def test_a_remembered_count_is_the_count(text):
    encoder = get_encoding("o200k_base")
    assert count_tokens(text) == count_tokens(text) == len(encoder.encode(text, disallowed_special=()))


def test_long_texts_are_counted_without_being_kept():
    long = "word " * (_CACHED_TEXT_CHARS // 5 + 10)
    assert count_tokens(long) == len(get_encoding("o200k_base").encode(long, disallowed_special=()))
