"""Written arithmetic that is false: "1520.4 - 3310.75 = 2790.35" in an answer or a step's output.

A model that does arithmetic in its head writes the equation and gets it wrong; code can tell, for any task and any
language, because an equation between written numbers is true or false whatever it is about. A reading fires only
when no value the written numbers may stand for makes it true:

- each number is read by the checks' one reader (``agents.checks.numbers``): every reading it keeps ("1.971" as 1.971
  or 1971), and the rounding its last written digit allows ("2.1 million" may be 2,149,999), so an equation written
  with rounded operands ("2.1 million / 0.35 million = 6.01") is true when some exact operands make it so;
- a result with its sign dropped counts as right ("120400 - 315600 = 195200": a difference written as a magnitude);
- the three numbers carry the same unit and the same glued letters ("48,0 ms - 41,5 ms = -6,5 ms", "2.81M - 2.63M =
  0.18M"; a unit on the result alone, "= 6 years", names what was computed, unless it is a percent), else the
  equation is skipped: "20% * 150 = 30", "0.3 / 3.1 = 9.68%" or "$2.81M - $2.63M = $180,000" mix readings code
  cannot settle;
- the equation stands alone: "A op B = C" with nothing arithmetic before A or after C ("2 + 3 * 4 = 14" is not
  read as "3 * 4 = 14"), one of + - * / × ÷ between A and B, and "=" (never "≈") before C.

    >>> [e.describe() for e in false_equations("So 1520.4 - 3310.75 = 2790.35 EUR.")]
    ['1520.4 - 3310.75 = 2790.35 EUR, but 1520.4 - 3310.75 is -1790.35']
    >>> false_equations("315600 - 120400 = 195200; 2.1 million / 0.35 million = 6.01; 412 / 375 = 1.10")
    []
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

from agents.checks.numbers import Number, read_numbers

__all__ = ["Equation", "false_equations"]

_UNIT = r"(?:%|‰|°\s?[CF]?|[^\W\d_]{1,12}²?)"
_CURRENCY = r"(?:[$£€¥₹]\s?)?"
_OPERATOR = re.compile(rf"^\s*(?P<unit>{_UNIT})?\s*(?P<op>[-−+*/×÷])\s*{_CURRENCY}$")
_EQUALS = re.compile(rf"^\s*(?P<unit>{_UNIT})?\s*=\s*{_CURRENCY}$")
_UNIT_AFTER = re.compile(rf"^\s*(?P<unit>{_UNIT})?")
_ARITHMETIC_BEFORE = re.compile(r"(?:[\d+\-−*/×÷^(=<>]\s*[$£€¥₹]?\s*|[.,][$£€¥₹]?)$")
"""Before the first number: more arithmetic ("2 + 3 * 4 = 14"), or a mark glued to it ("x.5 + 1 = 2")."""
_ARITHMETIC_AFTER = re.compile(rf"^\s*{_UNIT}?\s*[\d+\-−*/×÷^(]")
_OPS: dict[str, Callable[[float, float], float]] = {
    "-": operator.sub, "−": operator.sub, "+": operator.add, "*": operator.mul, "×": operator.mul,
    "/": operator.truediv, "÷": operator.truediv}


@dataclass(frozen=True, slots=True)
class Equation:
    """``expression = stated`` as written (``text``), and what ``expression`` is (the numbers' first readings)."""

    text: str
    expression: str
    value: float

    def describe(self) -> str:
        return f"{self.text}, but {self.expression} is {_short(self.value)}"


def false_equations(text: str) -> list[Equation]:
    """The equations written in ``text`` that no reading of their numbers makes true (see the module's
    docstring for what counts as one)."""
    numbers = read_numbers(text)
    found = (_false(text, a, b, c) for a, b, c in zip(numbers, numbers[1:], numbers[2:], strict=False))
    return [e for e in found if e is not None]


def _false(text: str, a: Number, b: Number, c: Number) -> Equation | None:
    operator = _OPERATOR.match(text[a.end:b.start])
    b_text = text[b.start:b.end]
    if operator is not None:
        op, unit_a = operator.group("op"), operator.group("unit") or ""
    elif not text[a.end:b.start].strip() and b_text[:1] in "-−":
        # "315600 -120400": the reader took the minus for the second number's sign
        op, unit_a, b, b_text = "-", "", _negated(b), b_text[1:]
    else:
        return None
    equals = _EQUALS.match(text[b.end:c.start])
    if equals is None or _ARITHMETIC_BEFORE.search(text[:a.start]) or _ARITHMETIC_AFTER.match(text[c.end:]):
        return None
    after_c = _UNIT_AFTER.match(text[c.end:])
    assert after_c is not None  # every part of the pattern is optional
    unit_c = after_c.group("unit") or ""
    unit_a, unit_b, unit_c = unit_a.lower(), (equals.group("unit") or "").lower(), unit_c.lower()
    # A unit on the result alone ("= 6 years", "= 13999.95 EUR") names what was computed, except a percent
    # ("0.3 / 3.1 = 9.68%"), which scales it.
    units_agree = unit_a == unit_b and (unit_c == unit_a or (not unit_a and unit_c not in ("%", "‰")))
    letters = {"".join(ch for ch in text[n.start:n.end] if ch.isalpha()) for n in (a, b, c)}
    if not units_agree or len(letters) != 1:
        return None  # mixed units or scales ("20% * 150 = 30", "$2.81M - $2.63M = $180,000"): not settled here
    if any(_holds(_OPS[op], x, y, z) for x, y, z in product(a.readings, b.readings, c.readings)):
        return None
    # _holds is true for a divisor that may be zero, so b.value is not zero here
    expression = f"{text[a.start:a.end]} {op} {b_text}"
    return Equation(text[a.start:c.end + after_c.end()].strip(), expression, _OPS[op](a.value, b.value))


def _negated(n: Number) -> Number:
    return Number(-n.value, n.tolerance, n.kind, n.measured, tuple((-v, t) for v, t in n.others), n.start, n.end)


def _holds(op: Callable[[float, float], float], a: tuple[float, float], b: tuple[float, float],
           c: tuple[float, float]) -> bool:
    """Some exact values within each number's rounding make ``a op b`` equal ``c`` or ``-c``."""
    if op is operator.truediv and (b[0] - b[1]) * (b[0] + b[1]) <= 0:
        return True  # a division by what may be zero: nothing to conclude
    corners = [op(x, y) for x in (a[0] - a[1], a[0] + a[1]) for y in (b[0] - b[1], b[0] + b[1])]
    low, high = min(corners), max(corners)
    slack = 1e-9 * max(abs(low), abs(high), 1.0)
    return any(value + c[1] >= low - slack and value - c[1] <= high + slack for value in (c[0], -c[0]))


def _short(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")
