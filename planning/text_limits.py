"""One size limit for every text a user or a model sends in: the task, a human's response, an answer, a check's
message, a step's stored output (docs/reliability.md, "Text limits").

Token counting costs time that grows faster than the text (a 2 MB run of one character took 21 s and stopped the
Supervisor's event loop for every task), and every one of these texts reaches a prompt that is counted. So each
is bounded by characters, which costs nothing to check, before anything counts it: a user's text over the limit
is refused with a typed error naming it (``agents.errors.TextTooLongError``); a model's or a check's text is cut
to it with a visible marker, so the task goes on and the reader sees that text is missing.

Example:
    >>> cap_text("short")
    'short'
    >>> cap_text("x" * 12, limit=4)
    'xxxx\\n[… 8 more characters cut: tetrarch keeps at most 4 characters of one text (MAX_TEXT_CHARS)]'
"""

from __future__ import annotations

__all__ = ["MAX_TEXT_CHARS", "cap_text"]

MAX_TEXT_CHARS = 50_000
"""Characters (about 12,000 English tokens) any one text may have: twice the default prompt budget, so whatever
fits a prompt fits here, and counting the tokens of a text this long takes well under a second."""

_CUT = "\n[… {cut} more characters cut: tetrarch keeps at most {limit} characters of one text (MAX_TEXT_CHARS)]"


def cap_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` itself when it fits ``limit`` characters, else its first ``limit`` characters and a marker."""
    if len(text) <= limit:
        return text
    return text[:limit] + _CUT.format(cut=len(text) - limit, limit=limit)
