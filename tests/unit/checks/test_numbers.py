"""The one number reader (agents/checks/numbers.py): what a number is, and what it is not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.checks.numbers import numbers_in, read_numbers, stated_numbers


def _values(text):
    return [n.value for n in read_numbers(text)]


@pytest.mark.parametrize(("text", "expected"), [
    ("httpx 0.28.1 and requests 2.32.3", []),                              # versions
    ("v2.1, version 3 and release 1.4", []),
    ("1.2.3-rc1 is out", []),
    ("Released on 2024-12-06T10:00:00Z.", [2024.0]),                       # ISO timestamp: its year only
    ("Google was founded on September 4, 1998.", [1998.0]),                # the day of a date is no figure
    ("le 4 septembre 1998", [1998.0]), ("am 4. September 1998", [1998.0]), ("el 4 de septiembre de 1998", [1998.0]),
    ("on 04/09/1998", [1998.0]), ("at 10:30 am", []),
    ("INJ-01, COVID-19, #4521, id_7 and r-42", []),                         # ids and codes
    ("She came 4th and 1st.", []),                                         # ordinals
    ("see https://example.com/items/123", []),
])
def test_what_is_not_a_figure(text, expected):
    assert _values(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("2,748,109 people", 2748109.0), ("1.971.689 Einwohner", 1971689.0), ("350 826 habitants", 350826.0),
    ("350\u202f826 habitants", 350826.0), ("1'971'689 Einwohner", 1971689.0), ("1.234,56 €", 1234.56),
    ("1 234,56 €", 1234.56), ("2,748,109.5", 2748109.5),
    ("1,86 Millionen", 1_860_000.0), ("68,4 millions d'habitants", 68_400_000.0), ("3,2 mil millones", 3.2e9),
    ("2.10 million", 2_100_000.0), ("5 billion", 5e9), ("about 650 thousand", 650_000.0),
    ("$2.45M", 2_450_000.0), ("€3bn", 3e9), ("2.45M units", 2.45), ("4,806 m high", 4806.0), ("2 Billion", 2.0),
    ("−35 %", -35.0), ("p95 fell by 35 ms", 35.0), ("2.1e6", 2.1e6),
    # four decimals after a leading group are a decimal, not a grouped number cut short ("0.123" and a stray 4)
    ("a rate of 0.1234", 0.1234), ("12.3456 ms", 12.3456), ("1,2345", 1.2345),
])
def test_grouping_decimals_and_scales(text, expected):
    assert _values(text) == [expected]


def test_a_number_two_conventions_read_differently_keeps_both_readings():
    [dot] = read_numbers("1.971")
    assert [v for v, _ in dot.readings] == [1.971, 1971.0]
    [comma] = read_numbers("1,860")
    assert [v for v, _ in comma.readings] == [1860.0, 1.86]


def test_years_and_measured_figures_are_told_apart():
    found = read_numbers("In 2023 the bridge was 1,280 m long and had 12 lanes.")
    assert [(n.value, n.kind, n.measured) for n in found] == [
        (2023.0, "year", False), (1280.0, "figure", True), (12.0, "figure", False)]


def test_structured_outputs_are_walked_and_id_keys_skipped():
    rows = [{"id": 17, "customer_id": 42, "orders": 12, "ok": True, "note": "about 3.5 million"}]
    assert _values(rows) == [12.0, 3_500_000.0]
    assert numbers_in({"population": 2100000, "sha": "8812ab"}) == [2100000.0]


def test_a_scaled_number_also_reads_as_its_mantissa_and_is_stated_once():
    assert numbers_in("2.10 million") == [2_100_000.0, 2.1]
    assert stated_numbers("2.10 million, then 2.1 million") == (2_100_000.0,)


@given(st.integers(0, 10**9))
def test_every_way_of_grouping_thousands_reads_the_same_whole_number(n):
    english = f"{n:,}"
    for written in (english, english.replace(",", "."), english.replace(",", " "), english.replace(",", "'")):
        readings = [v for num in read_numbers(f"about {written} people") for v, _ in num.readings]
        assert float(n) in readings, written


@given(st.integers(0, 9), st.integers(0, 99), st.integers(0, 99))
def test_no_version_is_a_figure(a, b, c):
    assert read_numbers(f"upgraded to {a}.{b}.{c} today") == ()


def test_a_scale_letter_before_a_currency_scales_and_a_year_month_is_no_figure():
    from agents.checks.numbers import read_numbers

    assert [(n.value, n.kind) for n in read_numbers("Ingresos en el Q3 de 2025: 5,48 M€")] == \
        [(2025.0, "year"), (5480000.0, "figure")]
    assert [n.value for n in read_numbers("910 k€; 1.2 bn USD")] == [910000.0, 1200000000.0]
    assert [n.value for n in read_numbers("a 4,806 m peak")] == [4806.0]  # a bare "m" is a unit
    assert [(n.value, n.kind) for n in read_numbers("Churn in 2025-02: 3.1%")] == [(2025.0, "year"), (3.1, "figure")]
    assert [n.kind for n in read_numbers("from 2019-2020")] == ["year", "year"]  # a span of years, not a month


def test_fields_that_name_ids_or_numbers_of_records_hold_no_figure():
    from agents.checks.numbers import is_id_field, read_numbers

    assert all(map(is_id_field, ("customer_id", "order_no", "invoice_number", "sha", "userId")))
    assert not any(map(is_id_field, ("open_orders", "balance_eur", "number", "units")))
    assert [n.value for n in read_numbers({"order_no": 4411, "units": 12})] == [12.0]
