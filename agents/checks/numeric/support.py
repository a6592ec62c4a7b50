"""Whether a figure an answer writes is one the results support: equal up to the rounding it is written with, to
a result's figure or to a sum, difference, ratio or percentage of two of them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from agents.checks.facts import Result, last_computed
from agents.checks.numbers import read_numbers

__all__ = ["derived", "rounded_to", "states", "states_computed", "supported", "written"]


def written(value: Any) -> list[tuple[tuple[float, float], ...]]:
    """Per number written in ``value``, its readings as (number, half a unit of its last significant digit):
    "650,000" → ((650000, 5000),); "2.1 million" → ((2100000, 50000), (2.1, 0.05)) — a scaled number may be the
    2.1 of a result given "in millions", so both readings count (``agents.checks.numbers``)."""
    return [n.readings for n in read_numbers(value)]


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


def states(answer: str, figure: float) -> bool:
    """Whether ``answer`` writes ``figure``, rounded as it writes it ("7.44 million", "1,220", "0.01")."""
    return any(supported(v, r, [figure]) or rounded_to(v, figure) for options in written(answer)
               for v, r in options)


def rounded_to(value: float, exact: float) -> bool:
    """``value`` is ``exact`` within 1%, or rounded to the decimals it is written with ("0.01" for 0.0053)."""
    if math.isclose(value, exact, rel_tol=0.01, abs_tol=1e-9):
        return True
    written = repr(float(value))
    decimals = len(written.split(".")[1]) if "." in written and "e" not in written else 0
    return decimals <= 3 and abs(value - exact) <= 0.5 * 10 ** -decimals + 1e-12


def derived(known: Sequence[float]) -> list[float]:
    values = list(dict.fromkeys(v for v in known if v != 0))[:40]  # bounded: 40² pairs at most
    out = []
    for a, b in itertools.permutations(values, 2):
        out += [a - b, a + b, a / b, (a - b) / b * 100, a / b * 100]
    return out


def supported(value: float, rounding: float, candidates: Iterable[float]) -> bool:
    """``value`` equals a candidate up to rounding: within 1%, or within the precision the answer wrote it with
    ("about 650,000" for 649,873; "2.1 million" for 2,102,650), in either sign."""
    for c in candidates:
        for v in (value, -value):
            if math.isclose(v, c, rel_tol=0.01, abs_tol=0.01) or abs(v - c) <= rounding:
                return True
    return False
