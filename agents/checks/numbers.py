"""One reading of the numbers a text or a tool's output states: what the checks, the figure reading of passages
and the calculator's figure fitting all use, so they never disagree about what a number is.

Most of the work is knowing what is *not* a figure: a version ("httpx 0.28.1"), a date or a timestamp (the 4 of
"September 4, 1998", "2024-12-06T10:00Z"; a date's four-digit year stays, as a year), a time of day, an id or a
code ("INJ-01", "#4521", ``{"id": 17}``), an address, an ordinal ("4th"). Thousands are grouped the ways languages
write them ("1,971,689", "1.971.689", "350 826", "1'971'689"), and a decimal comma is read ("1,86 Millionen").
A number that two conventions read differently ("1.971", "1,860") keeps both readings, the English one first.
Scale words count only where they are unambiguous: "million", "Millionen", "milliards", "mil millones"; "k",
"M" and "bn" glued to a number only beside a currency ("$2.45M"): "2.45M" alone, "4,806 m" and "Billion" (a
thousand billions in German) are read as written.

    >>> [(n.value, n.kind) for n in read_numbers("httpx 0.28.1 was released on 2024-12-06.")]
    [(2024.0, 'year')]
    >>> [n.value for n in read_numbers("Google was founded on September 4, 1998 by Larry Page.")]
    [1998.0]
    >>> [n.readings for n in read_numbers("1,86 Millionen Menschen; 1.971.689 Einwohner; 350 826 habitants")]
    [((1860000.0, 5000.0), (1.86, 0.005)), ((1971689.0, 0.5),), ((350826.0, 0.5),)]
    >>> [n.value for n in read_numbers({"id": 4521, "rows": [{"city_id": 7, "population": 350826}]})]
    [350826.0]
    >>> [n.value for n in read_numbers("Revenue was $2.45M, or 2.45M units; the peak is 4,806 m.")]
    [2450000.0, 2.45, 4806.0]
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Number", "NumberKind", "is_id_field", "numbers_in", "read_numbers", "rounded_to", "stated_numbers",
           "states", "supported", "written"]

NumberKind = Literal["figure", "year"]


@dataclass(frozen=True, slots=True)
class Number:
    """One number as written: its value (scale word applied), half a unit of its last written digit (how far a
    rounded copy of it may be), and its other readings: the bare mantissa of a scaled number ("2.1" of "2.1
    million", which a result given "in millions" states) or another convention's reading ("1.971" → 1971)."""

    value: float
    tolerance: float
    kind: NumberKind = "figure"
    measured: bool = False
    """Written with a unit, a scale word, a percent sign or a currency ("828 m" beside "163 floors")."""
    others: tuple[tuple[float, float], ...] = ()
    start: int = -1
    end: int = -1

    @property
    def readings(self) -> tuple[tuple[float, float], ...]:
        return ((self.value, self.tolerance), *self.others)


_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|"
    "januar|jänner|februar|märz|maerz|juni|juli|oktober|dezember|"
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre")
_MONTH = rf"(?:{_MONTHS})\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th|er|º|\.)?"
# Spans that are no figure; a group named ``year`` in one is kept as a year.
_NOT_FIGURES = re.compile(
    r"\b[a-z][a-z0-9+.-]*://\S+"                                                   # an address
    r"|\b(?P<year>\d{4})-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"  # ISO
    r"|\b\d{1,2}[./]\d{1,2}[./](?:(?P<year2>\d{4})|\d{2})\b"                        # 4.9.1998, 04/09/98
    r"|\b(?P<year3>\d{4})/\d{1,2}/\d{1,2}\b"
    r"|\b(?P<year6>\d{4})-(?:0[1-9]|1[0-2])\b(?![-./]?\d)"                      # 2025-02, a month (ISO)
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?(?![\d])"                        # a time of day
    rf"|\b{_MONTH}\s+{_DAY}(?:,?\s+(?P<year4>\d{{4}}))?(?![\d])"                     # September 4, 1998
    rf"|\b{_DAY}\s+(?:de\s+)?{_MONTH}(?:,?\s+(?:de\s+)?(?P<year5>\d{{4}}))?\b"       # 4 de septiembre de 1998
    r"|(?:\bv|\b(?:version|versión|release|rev)\s+)\d+(?:\.\d+)*\b"                 # v2, version 3.1
    r"|(?<![\d.,])(?P<ver>\d+(?:\.\d+){2,})(?:[-+][0-9A-Za-z.]+)?(?![\d])"          # 0.28.1, 1.2.3-rc1
    r"|[#№]\s?\d+"                                                                  # #4521
    r"|(?<=[A-Za-z_])(?<!\d[eE])[-_]?\d[\w.-]*|(?<=[A-Za-z]-)\d[\w.-]*",                       # INJ-01, COVID-19, id_7
    re.IGNORECASE)
_YEAR_GROUPS = ("year", "year2", "year3", "year4", "year5", "year6")

_SCALES = {
    "thousand": 1e3, "thousands": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9,
    "trillion": 1e12, "tausend": 1e3, "millionen": 1e6, "mio": 1e6, "milliarde": 1e9, "milliarden": 1e9,
    "mrd": 1e9, "billionen": 1e12, "mille": 1e3, "milliard": 1e9, "milliards": 1e9, "mil": 1e3, "millón": 1e6,
    "millon": 1e6, "millones": 1e6, "mil millones": 1e9, "billón": 1e12, "billones": 1e12}
_MONEY_SCALES = {"k": 1e3, "m": 1e6, "mn": 1e6, "mm": 1e6, "bn": 1e9, "b": 1e9}
_CURRENCY = re.compile(r"(?:[$£€¥₹]|\b(?:USD|EUR|GBP|CHF|JPY|US\$)\s?)$")
_SCALED_CURRENCY = re.compile(r"^\s?(?P<scale>k|M|Mn|bn|Bn)\s?(?:[$£€¥₹]|(?:USD|EUR|GBP|CHF|JPY)\b)")
"""A scale letter then a currency: "5,48 M€", "910 k€", "1.2 bn USD" (a bare "M" after a number is a unit)."""
_CURRENCY_AFTER = re.compile(r"^\s?(?:[$£€¥₹]|(?:USD|EUR|GBP|CHF|JPY|dollars?|euros?|pounds?)\b)", re.IGNORECASE)
_ORDINAL = frozenset(["st", "nd", "rd", "th", "er", "e", "ème", "eme", "º", "ª", "o", "a"])
_UNITS = re.compile(
    r"^\s?(?:%|‰|°\s?[CF]?|km²|km2|m²|m2|km|kg|mi|ft|m|cm|mm|g|t|l|s|ms|h|min|GB|MB|KB|TB|px|"
    r"people|inhabitants|residents|persons|Einwohner|Menschen|habitants|personnes|habitantes|personas|"
    r"percent|per cent|Prozent|pour cent|por ciento|points?|years?|Jahre|ans|años)(?![^\W\d_])",
    re.IGNORECASE)
_SIGN = "-−"
_BODY = re.compile(
    r"(?<![\w.,'’])(?P<sign>[-−](?=\d))?(?P<num>"
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!,?\d)"                    # 1,971,689.5
    r"|\d{1,3}(?:\.\d{3})+(?:,\d+)?(?!\.?\d)"                  # 1.971.689 / 1.234,56 / 1.971 (either)
    r"|\d{1,3}(?:['’]\d{3})+(?:\.\d+)?(?!\d)"                  # 1'971'689
    r"|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?![\d,.]?\d)"  # 350 826 / 1 234,56
    r"|\d+(?:[.,]\d+)?(?!\d))"
    r"(?P<exp>[eE][+-]?\d+(?![^\W\d_]))?"
    r"(?P<glued>[^\W\d_]+)?", re.UNICODE)
_SCALE_WORD = re.compile(
    r"^\s?(?P<word>mil millones|thousands?|millions?|billions?|trillion|tausend|millionen|mio\.?|milliarden?|"
    r"mrd\.?|billionen|mille|milliards?|millón|millon|millones|billón|billones|mil|Billion)(?![^\W\d_])",
    re.IGNORECASE)
_ID_KEY = re.compile(r"(?:^|[_-])(?:id|uuid|guid|sha|hash|code|zip|phone|version|rev|port|pid)$|[_-](?:no|nr|number)$"
                     r"|[a-z]Id$|^ID$", re.IGNORECASE)
_YEARS = (1000, 2100)


def read_numbers(value: Any) -> tuple[Number, ...]:
    """Every number ``value`` states: a text, a number, or any JSON-able output (walked: keys that name an id or
    a code hold no figure). A four-digit whole number in 1000-2100 written bare, or a date's year, is a year."""
    if isinstance(value, bool) or value is None:
        return ()
    if isinstance(value, (int, float)):
        return (_plain(float(value)),)
    if isinstance(value, str):
        return tuple(sorted(_read_text(value), key=lambda n: n.start))
    if isinstance(value, dict):
        return tuple(n for key, item in value.items() if not _ID_KEY.search(str(key)) for n in read_numbers(item))
    if isinstance(value, (list, tuple)):
        return tuple(n for item in value for n in read_numbers(item))
    return read_numbers(json.dumps(value, default=str, ensure_ascii=False))


def is_id_field(key: object) -> bool:
    """A record's field that names an id or a code ("customer_id", "order_no", "sha"): its number is no figure."""
    return bool(_ID_KEY.search(str(key)))


def numbers_in(value: Any) -> list[float]:
    """Every reading of every number in ``value``: "2.10 million" → 2100000.0 and 2.1; years and counts too."""
    return [v for n in read_numbers(value) for v, _ in n.readings]


def stated_numbers(value: Any) -> tuple[float, ...]:
    """Each number written in ``value`` once, as written with its scale word applied (not also its bare mantissa,
    which ``numbers_in`` keeps for answers given "in millions"), in order.

    >>> stated_numbers("France had about 68.4 million people on 1 January 2024.")
    (68400000.0, 2024.0)
    """
    # 12 significant digits: "66.1 million" is 66100000, not the 66099999.99999999 of 66.1 * 1e6
    return tuple(dict.fromkeys(float(f"{n.value:.12g}") for n in read_numbers(value)))


def written(value: Any) -> list[tuple[tuple[float, float], ...]]:
    """Per number written in ``value``, its readings as (number, half a unit of its last significant digit):
    "650,000" → ((650000, 5000),); "2.1 million" → ((2100000, 50000), (2.1, 0.05)) — a scaled number may be the
    2.1 of a result given "in millions", so both readings count (``agents.checks.numbers``)."""
    return [n.readings for n in read_numbers(value)]


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


def supported(value: float, rounding: float, candidates: Iterable[float]) -> bool:
    """``value`` equals a candidate up to rounding: within 1%, or within the precision the answer wrote it with
    ("about 650,000" for 649,873; "2.1 million" for 2,102,650), in either sign."""
    for c in candidates:
        for v in (value, -value):
            if math.isclose(v, c, rel_tol=0.01, abs_tol=0.01) or abs(v - c) <= rounding:
                return True
    return False


def _plain(value: float) -> Number:
    digits = repr(value)
    if value.is_integer() and "e" not in digits:
        whole = str(int(abs(value)))
        tolerance = 10.0 ** (len(whole) - len(whole.rstrip("0"))) / 2 if whole.strip("0") else 0.5
        return Number(value, tolerance, "year" if _YEARS[0] <= value <= _YEARS[1] else "figure")
    decimals = len(digits.split(".")[1]) if "." in digits and "e" not in digits else 6
    return Number(value, 10.0 ** -decimals / 2)


def _read_text(text: str) -> Iterator[Number]:
    masked = []
    for match in _NOT_FIGURES.finditer(text):
        if match.group("ver") and _grouped(match.group("ver"), "."):
            continue  # "1.971.689": thousands grouped with dots, not a version
        masked.append((match.start(), match.end()))
        year = next((match.group(g) for g in _YEAR_GROUPS if match.group(g)), None)
        if year is not None:
            start = match.start(next(g for g in _YEAR_GROUPS if match.group(g)))
            yield Number(float(year), 0.5, "year", start=start, end=start + 4)
    for match in _BODY.finditer(text):
        if any(s < match.end() and match.start() < e for s, e in masked):
            continue
        number = _number(text, match)
        if number is not None:
            yield number


def _number(text: str, match: re.Match[str]) -> Number | None:
    """The number ``match`` found, or None when it is an ordinal ("4th") or a code glued to letters ("8b3d")."""
    body, glued = match.group("num"), match.group("glued") or ""
    sign = -1.0 if match.group("sign") else 1.0
    readings = _values(body)
    if match.group("exp"):  # 2.1e6
        readings = [(float(readings[0][0]) * 10.0 ** int(match.group("exp")[1:]), 0.0)]
    end = match.end()
    scale, measured = 1.0, bool(glued)
    if glued:
        if glued.lower() in _ORDINAL:
            return None
        money = _CURRENCY.search(text[:match.start()]) or _CURRENCY_AFTER.match(text[end:])
        scale = _MONEY_SCALES.get(glued.lower(), 1.0) if money else 1.0
    elif money_scale := _SCALED_CURRENCY.match(text[end:]):
        scale, measured, end = _MONEY_SCALES[money_scale.group("scale").lower()], True, end + money_scale.end()
    elif word := _SCALE_WORD.match(text[end:]):
        name = word.group("word")
        # "Billion" is a thousand billions in German and a billion in English: read as written.
        scale = 1.0 if name == "Billion" else _SCALES[name.lower().rstrip(".")]
        measured, end = True, end + word.end()
    else:
        measured = bool(_UNITS.match(text[end:]) or _CURRENCY.search(text[:match.start()])
                        or _CURRENCY_AFTER.match(text[end:]))
    (value, tolerance), *others = [(sign * v * scale, t * scale) for v, t in readings]
    if scale != 1.0:
        others = [(sign * v, t) for v, t in readings[:1]] + others
    year = (not glued and scale == 1.0 and sign > 0 and body.isdigit() and len(body) == 4
            and _YEARS[0] <= value <= _YEARS[1])
    return Number(value, tolerance, "year" if year else "figure", measured or scale != 1.0, tuple(others),
                  match.start(), end)


def _values(body: str) -> list[tuple[float, float]]:
    """The readings of a number's digits, the likelier first: "1,971,689" one; "1.971" the decimal, then the
    German grouping; "1,86" the decimal comma; "1,860" the English grouping, then the decimal comma."""
    compact = re.sub(r"[ \u00a0\u202f'’]", "", body)
    if "," in compact and "." in compact:
        grouping = "," if compact.index(",") < compact.index(".") else "."
        return [_reading(compact.replace(grouping, ""), decimal=".," [grouping == "."])]
    for mark in (",", "."):
        if mark in compact:
            groups = compact.split(mark)
            if not _grouped(compact, mark):
                return [_reading(compact, decimal=mark)]
            grouped = _reading(compact.replace(mark, ""), decimal=None)
            if len(groups) > 2 or body != compact:
                return [grouped]
            decimal = _reading(compact, decimal=mark)
            return [grouped, decimal] if mark == "," else [decimal, grouped]
    return [_reading(compact, decimal=None)]


def _grouped(digits: str, mark: str) -> bool:
    """``digits`` split at ``mark`` look like thousands: one to three digits (not a lone 0), then threes."""
    groups = digits.split(mark)
    return len(groups) > 1 and all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3 and groups[0] != "0"


def _reading(digits: str, *, decimal: str | None) -> tuple[float, float]:
    if decimal is not None and decimal in digits:
        whole, fraction = digits.split(decimal, 1)
        return float(f"{whole}.{fraction}"), 10.0 ** -len(fraction) / 2
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return float(digits), 10.0 ** zeros / 2
