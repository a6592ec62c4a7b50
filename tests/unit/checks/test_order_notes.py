"""The sound set's note on the order of same-tool look-ups: the order it states is the values' true order, in every
format the one number reader knows, and it says nothing where a reading is ambiguous."""

from __future__ import annotations

import re
from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from agents.checks.facts import Result, Severity
from agents.checks.order import order_notes
from agents.checks.sound import result_notes


def _lookup(step: int, name: str, output: object, **inputs: object) -> Result:
    return Result(step, "lookup", f"figure of {name}", output, arguments=name, inputs={"name": name, **inputs})


def _winner(text: str) -> str:
    """The label the note puts first in "#A (..) is larger/later than #B (..)"."""
    found = re.search(r"; #(\d+) \([^)]*\) is (?:larger|later) than #(\d+)", text)
    assert found, text
    return found.group(1)


def _en(value: int) -> str:
    return f"{value:,}"


def _de(value: int) -> str:
    return f"{value:,}".replace(",", ".")


def _fr(value: int) -> str:
    return f"{value:,}".replace(",", "\u202f")


def _money_m(value: int) -> str:
    return f"${value / 1e6:.2f}M"


def _euro_m(value: int) -> str:
    return f"{value / 1e6:.2f} M€".replace(".", ",")


_FORMATS = (_en, _de, _fr, _money_m, _euro_m)


@given(st.integers(1_000_000, 900_000_000), st.integers(1_000_000, 900_000_000), st.sampled_from(_FORMATS),
       st.sampled_from(_FORMATS), st.sampled_from(["en", "de"]))
def test_the_stated_order_is_the_true_order_of_figures(a, b, fmt_a, fmt_b, lang):
    text = {"en": "Revenue of {} in 2025: {}", "de": "Umsatz von {} im Jahr 2025: {}"}[lang]
    steps = [_lookup(1, "Alpha", text.format("Alpha", fmt_a(a))), _lookup(2, "Beta", text.format("Beta", fmt_b(b)))]
    notes = order_notes(steps)
    if not notes:
        return  # silent is allowed; wrong is not
    assert [n.severity for n in notes] == [Severity.NOTE]
    shown_a = float(re.search(r"#1 \(Alpha\) states ([\d,.]+)", notes[0].text).group(1).replace(",", ""))
    shown_b = float(re.search(r"#2 \(Beta\) states ([\d,.]+)", notes[0].text).group(1).replace(",", ""))
    if shown_a == shown_b:
        assert "equal" in notes[0].text
    else:
        assert _winner(notes[0].text) == ("1" if shown_a > shown_b else "2")
    # the values shown are the values written (to the precision written)
    assert abs(shown_a - a) <= max(0.006e6, 1) and abs(shown_b - b) <= max(0.006e6, 1)


@given(st.dates(date(1990, 1, 1), date(2030, 12, 31)), st.integers(1, 4000))
def test_the_stated_order_of_dates_is_their_true_order(day, offset):
    later = day + timedelta(days=offset)
    steps = [_lookup(1, "pkg-a", f"pkg-a 2.10.3 was released on {later.isoformat()}."),
             _lookup(2, "pkg-b", f"pkg-b 10.1.0 was released on {day.isoformat()}.")]
    assert _winner(order_notes(steps)[0].text) == "1"


def test_a_number_the_call_was_given_is_not_the_figure_it_returned():
    steps = [Result(1, "p95", "", "p95 of checkout in week 11: 412.5 ms", arguments="checkout",
                    inputs={"service": "checkout", "week": 11}),
             Result(2, "p95", "", "p95 of search in week 11: 380 ms", arguments="search",
                      inputs={"service": "search", "week": 11})]
    assert _winner(order_notes(steps)[0].text) == "1"


def test_records_are_ordered_field_by_field_and_ids_are_skipped():
    steps = [_lookup(1, "C-1", {"id": "C-1", "customer_no": 99, "open_orders": 14, "balance_eur": 3120.4}),
             _lookup(2, "C-2", {"id": "C-2", "customer_no": 1, "open_orders": 31, "balance_eur": 15400.6})]
    text = order_notes(steps)[0].text
    assert "'open_orders'" in text and "'balance_eur'" in text and "customer_no" not in text
    assert "15,400.6" in text and text.count("#2 (C-2) is larger than #1 (C-1)") == 2


def test_silent_where_a_reading_is_ambiguous_or_values_are_not_comparable():
    def pair(x: object, y: object) -> list[Result]:
        return [_lookup(1, "A", x), _lookup(2, "B", y)]

    assert order_notes(pair("14 passed, 2 failed in 11.8s", "9 passed, 0 failed in 9.4s")) == []  # several
    assert order_notes(pair("the peak is 4,806 m", "the peak is 3,100 m")) == []  # 4806 or 4.806
    assert order_notes(pair("opened 2025-03-04T10:12Z, closed 2025-03-04T14:40Z", "opened 2025-03-05")) == []
    assert order_notes(pair("httpx 0.28.1", "requests 2.32.3")) == []  # versions are not figures
    assert order_notes(pair("12", None)) == []  # one output is missing
    one_tool_each = [Result(1, "visitors", "", 120, arguments="A", inputs={"site": "A"}),
                     Result(2, "population", "", 90, arguments="B", inputs={"city": "B"})]
    assert order_notes(one_tool_each) == []  # two measures, nothing to order
    fed = [_lookup(1, "A", 5), Result(2, "lookup", "", 7, depends_on=(1,), inputs={"name": "$step_1_result"})]
    assert order_notes(fed) == []  # step 2 used step 1: not two look-ups of the same thing
    same_call = [_lookup(1, "A", 5), _lookup(2, "A", 7)]
    assert order_notes(same_call) == []  # one call twice is not two entities


def test_years_are_ordered_when_each_output_states_one_and_no_figure():
    steps = [_lookup(1, "Google", "Google was founded on September 4, 1998 by Larry Page and Sergey Brin."),
             _lookup(2, "Amazon", "Amazon wurde am 5. Juli 1994 von Jeff Bezos gegründet.")]
    text = order_notes(steps)[0].text
    assert "the year 1998" in text and "the year 1994" in text and _winner(text) == "1"


def test_the_note_reaches_the_reviewer_as_a_note_among_the_sound_sets_facts():
    steps = [_lookup(1, "Olivar", "Ingresos de Olivar en el Q3 de 2025: 5,48 M€"),
             _lookup(2, "Sierra", "Ingresos de Sierra en el Q3 de 2025: 910 k€")]
    facts = result_notes("¿Cuál tiene más ingresos, Olivar o Sierra?", steps)
    ordered = [f for f in facts if f.text.startswith("Read by code")]
    assert len(ordered) == 1 and ordered[0].severity is Severity.NOTE
    assert "5,480,000" in ordered[0].text and _winner(ordered[0].text) == "1"
