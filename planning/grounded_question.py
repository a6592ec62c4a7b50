"""Whether a router's question back is grounded in the task: the words it quotes are the task's own.

A router template that declares ``# clarify: quoted`` asks the model, when it asks the user back, to quote the
task's words that point at something never named ("it", "the two", "that file"). The quote is the model's
evidence; code checks only that the evidence exists. A quote the task (or the session's earlier turns) does not
contain — a translation, an example copied from the prompt, a paraphrase — means the question back rests on
words the user never wrote, so the task is planned instead and the reason says why. A quote that is there is
trusted whatever it is: code never judges whether the words are vague, in any language.

    >>> question_grounding("'the two' never says which", "Which of the two is cheaper?", "")
    Grounding(quote='the two', grounded=True)
    >>> question_grounding("'the two' never says which", "Wie viele Jahre nach Adidas wurde SAP gegründet?", "")
    Grounding(quote='the two', grounded=False)
    >>> question_grounding("'l'équipe plateforme' is never named", "Qui est dans l'équipe plateforme ?", "")
    Grounding(quote="l'équipe plateforme", grounded=True)
    >>> question_grounding("the task is unclear", "Fix it.", "").grounded
    False
    >>> question_grounding("'it' never says what", "Count the lines with errors.", "").grounded
    False
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Grounding", "question_grounding"]

# A quote opens after the start, a space or an opening bracket and closes before a space, punctuation or the
# end, so an apostrophe inside a word (l'équipe, don't) neither opens nor closes one.
_QUOTE = re.compile(r"""(?:^|(?<=[\s(\[:,]))(?:'(?P<s>.+?)'|"(?P<d>.+?)"|‘(?P<ls>.+?)’|“(?P<ld>.+?)”|«\s?(?P<g>.+?)\s?»"""
                    r"""|„(?P<low>.+?)[“”])(?=[\s,.;:!?)\]]|$)""")


@dataclass(frozen=True, slots=True)
class Grounding:
    quote: str | None
    """The first quoted span of the reason; None when it quotes nothing."""
    grounded: bool
    """The quote occurs in the task or the earlier turns (case and spacing aside)."""


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").casefold().split())


def question_grounding(reason: str, task: str, history: str) -> Grounding:
    """The quote a question back's ``reason`` gives and whether the user wrote it."""
    match = _QUOTE.search(reason.strip())
    if match is None:
        return Grounding(None, False)
    quote = next(v for v in match.groupdict().values() if v is not None).strip()
    wanted = _norm(quote)
    if not wanted:
        return Grounding(quote, False)
    # Whole words: "it" is not grounded by "with", nor "the two" by "the twofold".
    found = re.compile(r"(?<!\w)" + re.escape(wanted) + r"(?!\w)")
    return Grounding(quote, bool(found.search(_norm(task)) or found.search(_norm(history))))
