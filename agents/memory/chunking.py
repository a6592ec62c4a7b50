"""Paragraph-aware chunking with overlap; every chunk is an exact slice of the source text.

Chunks are spans ``text[start:end]``, so a passage found later can be cited by character offsets into the
original document. Paragraphs (blank-line separated) are packed whole while they fit ``max_tokens``; a
paragraph longer than that is cut at sentence ends, and a sentence longer than that at word boundaries. The
next chunk starts with the last units of the previous one, up to ``overlap_tokens``, so a fact that straddles
a boundary is still found whole in one chunk.

Example:
    >>> text = "First paragraph here.\\n\\nSecond one.\\n\\nThird paragraph, a bit longer than the rest."
    >>> [(c.index, text[c.start:c.end] == c.text) for c in chunk_text(text, max_tokens=8, overlap_tokens=0,
    ...                                                                count_tokens=lambda s: len(s.split()))]
    [(0, True), (1, True)]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from agents.memory.errors import InvalidMemoryArgumentError

__all__ = ["Chunk", "TokenCounter", "chunk_text", "split_units"]

TokenCounter = Callable[[str], int]

_PARAGRAPH = re.compile(r"\S(?:.*?\S)??(?=\s*\n\s*\n|\s*\Z)", re.DOTALL)
_SENTENCE = re.compile(r"\S.*?(?:[.!?…](?=\s)|\Z)", re.DOTALL)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """``text == source[start:end]``; ``index`` counts chunks from 0 in document order."""

    index: int
    start: int
    end: int
    text: str


def _pieces(pattern: re.Pattern[str], text: str, offset: int) -> list[tuple[int, int]]:
    return [(offset + m.start(), offset + m.end()) for m in pattern.finditer(text)]


def _words_within(text: str, start: int, end: int, max_tokens: int, count: TokenCounter) -> list[tuple[int, int]]:
    """Cut one over-long sentence into runs of whole words that fit (each word counted once, plus one token
    per space, an upper bound for BPE); a single giant "word" stays whole."""
    words = _pieces(_WORD, text[start:end], start)
    runs: list[tuple[int, int]] = []
    run_start, run_end, run_tokens = words[0][0], words[0][1], count(text[words[0][0]:words[0][1]])
    for w_start, w_end in words[1:]:
        size = count(text[w_start:w_end]) + 1
        if run_tokens + size > max_tokens:
            runs.append((run_start, run_end))
            run_start, run_tokens = w_start, size - 1
        else:
            run_tokens += size
        run_end = w_end
    runs.append((run_start, run_end))
    return runs


def split_units(text: str, max_tokens: int, count: TokenCounter) -> list[tuple[int, int]]:
    """The (start, end) spans chunks are packed from: paragraphs, or smaller pieces of over-long ones."""
    units: list[tuple[int, int]] = []
    for p_start, p_end in _pieces(_PARAGRAPH, text, 0):
        if count(text[p_start:p_end]) <= max_tokens:
            units.append((p_start, p_end))
            continue
        for s_start, s_end in _pieces(_SENTENCE, text[p_start:p_end], p_start):
            if count(text[s_start:s_end]) <= max_tokens:
                units.append((s_start, s_end))
            else:
                units.extend(_words_within(text, s_start, s_end, max_tokens, count))
    return units


def _overlap_start(tokens: Callable[[int, int], int], first: int, last: int, n_units: int, overlap: int,
                   max_tokens: int) -> int:
    """Index of the unit the next chunk starts at: the earliest unit after ``first`` whose run to ``last``
    fits in ``overlap`` tokens, or ``last + 1`` when none does (always moves forward). An overlap that would
    leave no room for the next unit is dropped: that chunk would only repeat the end of this one."""
    start = last + 1
    for k in range(last, first, -1):
        if tokens(k, last) > overlap:
            break
        start = k
    if start <= last and last + 1 < n_units and tokens(start, last + 1) > max_tokens:
        return last + 1
    return start


def chunk_text(text: str, *, max_tokens: int, overlap_tokens: int, count_tokens: TokenCounter) -> list[Chunk]:
    """Chunks of about ``max_tokens`` at most (a single word longer than that is kept whole), in order.

    A chunk's size is the sum of its units' token counts, each counted once: counting every candidate span
    again made indexing quadratic in the paragraphs of a document, and a BPE count of joined text differs
    from the sum by at most a token per boundary."""
    if max_tokens < 1:
        raise InvalidMemoryArgumentError("max_tokens", max_tokens, "use a positive token count, e.g. 200")
    if not 0 <= overlap_tokens < max_tokens:
        raise InvalidMemoryArgumentError("overlap_tokens", overlap_tokens,
                                         f"use 0 up to max_tokens - 1 ({max_tokens - 1})")
    units = split_units(text, max_tokens, count_tokens)
    prefix = list(itertools.accumulate((count_tokens(text[s:e]) for s, e in units), initial=0))

    def tokens(i: int, j: int) -> int:  # units i..j inclusive
        return prefix[j + 1] - prefix[i]

    chunks: list[Chunk] = []
    first = 0
    while first < len(units):
        last = first
        while last + 1 < len(units) and tokens(first, last + 1) <= max_tokens:
            last += 1
        start, end = units[first][0], units[last][1]
        chunks.append(Chunk(len(chunks), start, end, text[start:end]))
        if last + 1 >= len(units):
            break
        first = (_overlap_start(tokens, first, last, len(units), overlap_tokens, max_tokens)
                 if overlap_tokens else last + 1)
    return chunks
