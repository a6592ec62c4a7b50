"""The server's prompt cache drops conversation steps before prefilled prefixes, and finds what the library finds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.llm.local._prompt_cache import PrefixStateCache, common_prefix
from support.tiers import examples


def _cache(capacity: int = 100, share: float = 0.5) -> PrefixStateCache[str]:
    return PrefixStateCache(capacity, size_of=len, common_prefix=common_prefix, prefix_share=share)


def _request(cache: PrefixStateCache[str], prompt: tuple[int, ...], generated: tuple[int, ...], size: int) -> None:
    try:
        cache.get(prompt)
    except KeyError:
        pass
    cache.put(prompt + generated, "x" * size)


def test_a_one_token_request_stores_a_prefix_and_a_longer_one_a_step():
    cache = _cache()
    _request(cache, (1, 2, 3), (9,), 10)
    _request(cache, (1, 2, 3, 4), (5, 6), 10)
    _request(cache, (7,), (), 10)  # stopped before any token: a prefill too
    assert [cache.is_prefix(k) for k in cache.keys()] == [True, False, True]


def test_a_state_stored_without_a_lookup_of_its_prompt_is_a_step():
    cache = _cache()
    cache.put((1, 2, 3), "x")
    _request(cache, (5, 5), (1,), 1)
    cache.put((1, 2), "y")  # the last lookup was another prompt: nothing says how much this request generated
    assert not cache.is_prefix((1, 2, 3)) and cache.is_prefix((5, 5, 1)) and not cache.is_prefix((1, 2))


def test_steps_go_first_however_many_come_after_the_prefixes():
    # What the held-out benchmark did: each role prefilled, then ReAct turns by the dozen between planned tasks.
    cache = _cache(capacity=1_000)
    for role in range(4):
        _request(cache, (100 + role, 1, 2), (0,), 50)
    for turn in range(40):
        _request(cache, (7, turn), (1, 2, 3), 120)
    assert [k[0] for k in cache.keys() if cache.is_prefix(k)] == [100, 101, 102, 103]
    assert cache.size <= 1_000


def test_prefixes_past_their_share_go_least_recently_used_first():
    cache = _cache(capacity=100, share=0.5)
    for first in (1, 2, 3):
        _request(cache, (first,), (0,), 20)
    _request(cache, (1, 5), (6, 7), 0)  # uses prefix 1 again: 2 is now the least recently used
    _request(cache, (9,), (1, 2), 45)   # 60 of prefixes + 45 > 100, and prefixes hold more than half
    assert (2, 0) not in cache.keys() and {(1, 0), (3, 0), (9, 1, 2)} <= set(cache.keys())


def test_the_lookup_loads_the_longest_shared_prefix_and_raises_when_none_is():
    cache = _cache()
    _request(cache, (1, 2), (0,), 1)
    _request(cache, (1, 2, 3, 4), (8, 8), 1)
    assert cache.get((1, 2, 3, 9)) == "x"
    assert cache.longest_prefix_key((1, 2, 3, 9)) == (1, 2, 3, 4, 8, 8)
    with pytest.raises(KeyError):
        cache.get((5,))


tokens = st.tuples(st.integers(0, 3)).map(tuple) | st.lists(st.integers(0, 3), min_size=1, max_size=6).map(tuple)
requests = st.lists(st.tuples(tokens, st.lists(st.integers(0, 3), max_size=3).map(tuple), st.integers(0, 60)),
                    max_size=30)


@settings(max_examples=examples(300), deadline=None)
@given(requests)
def test_the_cap_holds_and_a_prefix_goes_only_when_it_must(reqs):
    cache = _cache(capacity=100, share=0.5)
    sizes: dict[tuple[int, ...], int] = {}
    for prompt, generated, size in reqs:
        before = {k: cache.is_prefix(k) for k in cache.keys()}
        _request(cache, prompt, generated, size)
        key = prompt + generated
        sizes[key] = size
        assert cache.size <= 100
        after = set(cache.keys())
        stored_prefix = len(generated) <= 1
        prefix_bytes = sum(sizes[k] for k, p in before.items() if p and k != key) + (size if stored_prefix else 0)
        dropped_prefix = any(p and k not in after for k, p in before.items() if k != key)
        if dropped_prefix and prefix_bytes <= 50:
            # Within their share, prefixes go only once every step has gone.
            assert all(cache.is_prefix(k) for k in after)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(tokens, min_size=1, max_size=12), tokens)
def test_the_lookup_matches_a_scan_of_every_key(keys, prompt):
    cache = _cache(capacity=10**9)
    for key in keys:
        cache.put(key, "x")
    best = max((common_prefix(k, prompt) for k in cache.keys()), default=0)
    found = cache.longest_prefix_key(prompt)
    if best == 0:
        assert found is None
    else:
        assert found is not None and common_prefix(found, prompt) == best
        # The least recently used of the ties, as llama-cpp-python's own cache picks.
        assert found == next(k for k in cache.keys() if common_prefix(k, prompt) == best)


def test_the_launcher_installs_it_as_the_servers_ram_cache_with_lean_states(monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    import numpy as np
    from llama_cpp.llama import LlamaState

    from agents.llm.local import _launch

    monkeypatch.setattr(llama_cpp, "LlamaRAMCache", llama_cpp.LlamaRAMCache)  # restored after the test
    _launch._install_lean_prompt_cache()
    cache = llama_cpp.LlamaRAMCache(capacity_bytes=100)

    def state(tokens: list[int], size: int) -> LlamaState:
        return LlamaState(input_ids=np.array(tokens, np.intc), scores=np.ones((len(tokens), 8), np.single),
                          n_tokens=len(tokens), llama_state=b"", llama_state_size=size, seed=0)

    with pytest.raises(KeyError):
        cache[(1, 2, 3)]
    cache[(1, 2, 3, 9)] = state([1, 2, 3, 9], 40)  # the warm-up's one token: a prefix
    for turn in range(5):  # steps, each past the cap with the ones before
        with pytest.raises(KeyError):
            cache[(20 + turn, 5)]
        cache[(20 + turn, 5, 1, 1)] = state([20 + turn, 5, 1, 1], 50)
    assert (1, 2, 3, 5) in cache and cache.cache_size == 90
    loaded = cache[(1, 2, 3, 5)]
    assert loaded.n_tokens == 4 and loaded.scores.shape == (1, 8)  # kept without the logits copy
