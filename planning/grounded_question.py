"""Whether words a model says the user wrote are really in the task (or the session's earlier turns).

The router's question back stands only when a narrow follow-up (``clarify_check``) names the task's words that
point at something never named, and those words are the user's own. Code checks only that the words exist,
as whole words, case and spacing aside; it never judges whether they are vague, in any language.

    >>> written_in("die beiden", "Vergleiche die  Beiden.", "")
    True
    >>> written_in("it", "Count the lines with errors.", "")
    False
    >>> written_in("the capital", "And its size?", "user: the capital of Norway")
    True
"""

from __future__ import annotations

import re

__all__ = ["written_in"]


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").casefold().split())


def written_in(words: str, task: str, history: str) -> bool:
    """Whether ``words`` occur in ``task`` or ``history`` as whole words: "it" is not written in "with", nor
    "the two" in "the twofold"."""
    wanted = _norm(words)
    if not wanted:
        return False
    found = re.compile(r"(?<!\w)" + re.escape(wanted) + r"(?!\w)")
    return bool(found.search(_norm(task)) or found.search(_norm(history)))
