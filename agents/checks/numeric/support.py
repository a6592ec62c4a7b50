"""Whether a figure an answer writes is one the results support: equal up to the rounding it is written with, to
a result's figure or to a sum, difference, ratio or percentage of two of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from agents.checks.facts import Result, last_computed
from agents.checks.numbers import states

__all__ = ["derived", "states_computed"]


def states_computed(answer: str | None, results: Sequence[Result]) -> bool:
    """The answer states the figure the plan's last step computed (rounded as written). A task with no computing
    step is never so: a looked-up figure can be about the wrong thing, which only the reviewer can tell. Whether
    code finds anything wrong with the answer is ``check_answer``'s to say (the policy reads both).

        >>> r = [Result(1, "doc_search", "x", "Rome had 2.75 million"), Result(2, "doc_search", "y", "Paris had 2.10 million"),
        ...      Result(3, "calculator", "difference", 650000.0, depends_on=(1, 2))]
        >>> states_computed("Rome, by about 650,000 people.", r), states_computed("Rome is larger.", r)
        (True, False)
    """
    last = last_computed(results)
    return bool(answer) and last is not None and states(answer or "", float(last.output))


def derived(known: Sequence[float]) -> list[float]:
    values = list(dict.fromkeys(v for v in known if v != 0))[:40]  # bounded: 40² pairs at most
    out = []
    for a, b in itertools.permutations(values, 2):
        out += [a - b, a + b, a / b, (a - b) / b * 100, a / b * 100]
    return out
