"""Prefilled prefix states kept on disk across server starts (``agents.llm.local._state_shelf``), and the prompt
cache taking them back as prefixes."""

from __future__ import annotations

import os

from agents.llm.local._prompt_cache import PrefixStateCache, common_prefix
from agents.llm.local._state_shelf import StateShelf, build_fingerprint


def test_a_saved_state_is_loaded_by_the_next_start(tmp_path):
    StateShelf(tmp_path, build="b1", max_bytes=1 << 20).save((5, 6, 7), {"llama_state": b"abc"})
    again = StateShelf(tmp_path, build="b1", max_bytes=1 << 20)
    assert again.has((5, 6, 7)) and not again.has((5, 6))
    assert list(again.load()) == [((5, 6, 7), {"llama_state": b"abc"})]


def test_another_build_sees_none_of_them(tmp_path):
    StateShelf(tmp_path, build="b1", max_bytes=1 << 20).save((1,), {"x": 1})
    assert list(StateShelf(tmp_path, build="b2", max_bytes=1 << 20).load()) == []


def test_the_shelf_keeps_its_cap_dropping_the_oldest(tmp_path):
    shelf = StateShelf(tmp_path, build="b", max_bytes=2500)
    for i in range(4):
        shelf.save((i,), {"llama_state": bytes(1000)})
        os.utime(shelf.dir / shelf._name((i,)), ns=(i * 10**9, i * 10**9))  # written in this order
    assert [key for key, _ in shelf.load()] == [(2,), (3,)]


def test_an_unreadable_file_is_skipped_and_removed(tmp_path):
    shelf = StateShelf(tmp_path, build="b", max_bytes=1 << 20)
    shelf.save((1, 2), {"x": 1})
    broken = shelf.dir / shelf._name((9,))
    broken.write_bytes(b"not a pickle")
    assert [key for key, _ in shelf.load()] == [(1, 2)]
    assert not broken.exists()


def test_the_build_fingerprint_changes_with_the_libraries(tmp_path):
    (tmp_path / "lib").mkdir()
    lib = tmp_path / "lib" / "libllama.so"
    lib.write_bytes(b"one")
    first = build_fingerprint(str(tmp_path), "0.3.9")
    lib.write_bytes(b"rebuilt")
    assert build_fingerprint(str(tmp_path), "0.3.9") != first
    assert build_fingerprint(str(tmp_path), "0.3.9").startswith("0.3.9-")


def test_a_preloaded_state_is_a_prefix_the_next_prompt_starts_from():
    cache = PrefixStateCache(100, size_of=len, common_prefix=common_prefix)
    cache.preload((1, 2, 3, 9), "p" * 40)
    assert cache.is_prefix((1, 2, 3, 9))
    assert cache.get((1, 2, 3, 4, 5)) == "p" * 40
    cache.put((1, 2, 3, 4, 5, 6, 6), "s" * 35)  # a conversation step
    cache.put((8, 8), "t" * 35)                 # another: past the cap the step goes, not the prefix
    assert (1, 2, 3, 9) in cache.keys()
