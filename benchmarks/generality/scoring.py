"""Scoring a real model's free-text answer against a task's ``Expect``: right, accepted wrong, or other.

A benchmark's reader, not the product's: it reads the figures an answer may be written with in any of the
suite's languages ("1,971,689", "1.971.689", "350 826", "2,5 %", "1,86 Millionen", "$2.45M") and takes a figure
as matching when any of its readings is within tolerance, so a right figure is never missed for its format.

    >>> sorted(readings("1.971.689"))[-1], sorted(readings("2,5")), sorted(readings("0.5"))
    (1971689.0, [2.5], [0.5])
    >>> answer_right(Expect(number=1_860_000), "rund 1,86 Millionen")
    True
    >>> answer_right(Expect(names=("Rome",), rivals=("Paris",)), "Paris is smaller than Rome")
    False
    >>> answer_right(Expect(number=35, sign=-1), "+35 ms"), answer_right(Expect(number=35, sign=-1), "it fell by 35 ms")
    (False, True)
    >>> answer_right(Expect(number=35, sign=-1), "it changed by 35 ms"), answer_right(Expect(number=5.62e6), "5,620,000 M€")
    (False, False)
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from benchmarks.generality.model import Expect

__all__ = ["Verdict", "answer_right", "readings", "verdict"]

Verdict = Literal["right", "accepted_wrong", "other"]

_NUMBER = re.compile(r"\d{1,3}(?:[ \u00a0\u202f.,']\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?")
_SCALE = re.compile(r"\s*(bn|billion|mrd|milliards?|mil millones|millones|millions?|millionen|mio\.?|m|k)\b",
                    re.IGNORECASE)
_SCALES = {"bn": 1e9, "billion": 1e9, "mrd": 1e9, "milliard": 1e9, "milliards": 1e9, "mil millones": 1e9,
           "millones": 1e6, "million": 1e6, "millions": 1e6, "millionen": 1e6, "mio": 1e6, "mio.": 1e6, "m": 1e6,
           "k": 1e3}


def readings(token: str) -> set[float]:
    """Every value ``token`` may mean: its separators read the English way and the continental way. A mark is
    read as a thousands separator only where groups of three digits follow it ("0.5" is never 5)."""
    compact = re.sub(r"[ \u00a0\u202f']", "", token)
    out = set()
    for group, point in ((",", "."), (".", ",")):
        whole = compact.split(point)[0]
        if group in whole and not re.fullmatch(rf"\d{{1,3}}(?:{re.escape(group)}\d{{3}})+", whole):
            continue
        text = compact.replace(group, "").replace(point, ".")
        try:
            out.add(float(text))
        except ValueError:
            continue
    return out


_DOWN = re.compile(r"\b(fell|fall|drop\w*|decreas\w*|declin\w*|lower|less|baiss\w*|diminu\w*|recul\w*|gesunken|"
                   r"gefallen|sank|r\u00fcckgang|weniger|baj\u00f3|bajo|disminu\w*|descend\w*|cay\u00f3|menos)\b",
                   re.IGNORECASE)
_UP = re.compile(r"\b(rose|rise|grew|increas\w*|higher|more|later|after|hausse|augment\w*|gestiegen|stieg|mehr|"
                 r"zunahme|subi\u00f3|aument\w*|creci\w*|m\u00e1s|apr\u00e8s|nach|despu\u00e9s)\b", re.IGNORECASE)


def _figures(text: str) -> list[tuple[float, str]]:
    """(value, the sign written before it: "+", "-" or "") for every reading of every figure in ``text``."""
    values: list[tuple[float, str]] = []
    for m in _NUMBER.finditer(text):
        before = text[max(0, m.start() - 2):m.start()].replace("$", "").strip()
        sign = "-" if before.endswith(("-", "\u2212")) else "+" if before.endswith("+") else ""
        base = readings(m.group())
        if scale := _SCALE.match(text, m.end()):
            # Scaled, the digits alone are not what the answer states: "5,620,000 M€" is not 5.62 million.
            factor = _SCALES[scale.group(1).lower()]
            base = {v * factor for v in base}
        values += [(v, sign) for v in base]
    return values


def _direction_ok(sign: int, written: str, text: str) -> bool:
    """A written sign must agree with the expected one; without one, the wording must say the expected direction
    and not the opposite ("fell ... less than before" is not read). An answer that says neither states a
    magnitude, which is an increase as figures are read: "changed by $180,000" is not a fall of 180,000."""
    if written:
        return (written == "+") == (sign > 0)
    down, up = bool(_DOWN.search(text)), bool(_UP.search(text))
    if down != up:
        return down == (sign < 0)
    return sign > 0 or down


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def answer_right(expect: Expect, answer: str | None) -> bool:
    """Every expected name present, each before any rival, and the expected figure among the answer's figures
    (magnitudes: "fell by 35" and "-35" both state a change of 35)."""
    if not answer:
        return False
    text = _fold(answer)
    rivals = [text.find(_fold(r)) for r in expect.rivals]
    for name in expect.names:
        at = text.find(_fold(name))
        if at < 0 or any(0 <= r < at for r in rivals):
            return False
    if expect.number is None:
        return True
    target = abs(expect.number)
    slack = max(expect.tolerance * target, 0.011)
    return any(abs(v - target) <= slack and (not expect.sign or _direction_ok(expect.sign, written, answer))
               for v, written in _figures(answer))


def verdict(expect: Expect, status: str, answer: str | None) -> Verdict:
    """``right`` (accepted and right), ``accepted_wrong`` (accepted, not right) or ``other`` (escalated, failed,
    sent to clarify or refused: no answer was given as final)."""
    if status != "accepted":
        return "other"
    return "right" if answer_right(expect, answer) else "accepted_wrong"
