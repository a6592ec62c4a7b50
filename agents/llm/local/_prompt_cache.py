"""The server's prompt cache: model states by token prefix, where a prefilled prefix outlives conversation steps.

llama-cpp-python's ``LlamaRAMCache`` stores a state after every request and drops the least recently used past its
byte cap. Every call of a role starts with that role's instructions, prefilled once at start-up
(``agents.llm.local.warm``); but each call also stores its own state, and a run of calls that never come back (a
ReAct agent's turns, an executor's repair rounds) pushes the prefilled states out. The next call of the role then
reads its whole prompt again: in the held-out benchmark six planned tasks waited 48-63 s for their first step,
six others 9-13 s.

``PrefixStateCache`` keeps two kinds of state:

* a **prefix**, stored by a request that asked for at most one token (a prefill: the warm-up asks for one token per
  role), which many later prompts start with;
* a **step**, stored by any other request: a conversation's latest turn, which the next turn may extend.

It drops steps first, least recently used first, and prefixes only when no step is left or when prefixes hold
more than ``prefix_share`` of the cap (so a client prefilling without end cannot starve conversations). The
lookup is the library's: the state sharing the longest prefix with the prompt.

Pure Python over any state type: ``_launch.py`` wraps it for llama.cpp states (loaded by file path there: the
server child must not import the ``agents`` package).

Example (what the server does for each request: look its prompt up, then store the state it ends in):
    >>> cache = PrefixStateCache(100, size_of=len, common_prefix=common_prefix)
    >>> def request(prompt, generated, state):
    ...     try:
    ...         cache.get(prompt)
    ...     except KeyError:
    ...         pass  # nothing shares a prefix: the prompt is read from its start
    ...     cache.put(prompt + generated, state)
    >>> request((1, 2, 3), (9,), "p" * 40)      # a prefill: one token asked for, so a prefix
    >>> request((7, 7), (5, 5), "s" * 35)       # a step
    >>> request((8,), (4, 4), "t" * 35)         # another: past the cap of 100 the older step goes, not the prefix
    >>> cache.keys()
    [(1, 2, 3, 9), (8, 4, 4)]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["PrefixStateCache", "common_prefix"]

S = TypeVar("S")

Key = tuple[int, ...]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class _Entry(Generic[S]):
    state: S
    size: int
    prefix: bool


class PrefixStateCache(Generic[S]):
    """States by token key, capped at ``capacity_bytes`` (``size_of`` a state), prefixes kept over steps."""

    def __init__(self, capacity_bytes: int, *, size_of: Callable[[S], int],
                 common_prefix: Callable[[Sequence[int], Sequence[int]], int], prefix_share: float = 0.5) -> None:
        self.capacity_bytes = capacity_bytes
        self.prefix_share = prefix_share
        self._size_of = size_of
        self._common_prefix = common_prefix
        self._entries: OrderedDict[Key, _Entry[S]] = OrderedDict()  # least recently used first
        self._last_prompt: Key | None = None

    @property
    def size(self) -> int:
        return sum(entry.size for entry in self._entries.values())

    def keys(self) -> list[Key]:
        return list(self._entries)

    def is_prefix(self, key: Sequence[int]) -> bool:
        return self._entries[tuple(key)].prefix

    def longest_prefix_key(self, prompt: Sequence[int]) -> Key | None:
        """The stored key sharing the most leading tokens with ``prompt`` (the least recently used on a tie, as the
        library does), None if none shares any."""
        best, best_len = None, 0
        for key in self._entries:
            n = self._common_prefix(key, prompt)
            if n > best_len:
                best, best_len = key, n
        return best

    def get(self, prompt: Sequence[int]) -> S:
        """The state to start ``prompt`` from; raises KeyError if none shares a prefix. The server looks up every
        request's prompt before reading it, which is how ``put`` learns how many tokens a request generated."""
        prompt = tuple(prompt)
        self._last_prompt = prompt
        key = self.longest_prefix_key(prompt)
        if key is None:
            raise KeyError("no cached state shares a prefix with this prompt")
        self._entries.move_to_end(key)
        return self._entries[key].state

    def preload(self, key: Sequence[int], state: S) -> None:
        """Store a prefix state saved by an earlier server (``_state_shelf.py``), as if prefilled now."""
        key = tuple(key)
        self._entries.pop(key, None)
        self._entries[key] = _Entry(state, self._size_of(state), True)
        self._evict()

    def put(self, key: Sequence[int], state: S) -> None:
        """Store the state after a request: its prompt and the tokens it generated."""
        key = tuple(key)
        last, self._last_prompt = self._last_prompt, None
        generated = len(key) - len(last) if last is not None and key[:len(last)] == last else None
        prefix = generated is not None and generated <= 1
        self._entries.pop(key, None)
        self._entries[key] = _Entry(state, self._size_of(state), prefix)
        self._evict()

    def _evict(self) -> None:
        while self._entries and self.size > self.capacity_bytes:
            del self._entries[self._victim()]

    def _victim(self) -> Key:
        steps = [key for key, entry in self._entries.items() if not entry.prefix]
        prefix_bytes = sum(entry.size for entry in self._entries.values() if entry.prefix)
        if not steps or prefix_bytes > self.prefix_share * self.capacity_bytes:
            return next(key for key, entry in self._entries.items() if entry.prefix)
        return steps[0]
