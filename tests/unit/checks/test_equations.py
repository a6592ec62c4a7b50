"""A false equation is read only where no reading of its numbers makes it true: a property test writes true
equations the ways languages write numbers (rounded, grouped, with units) and none may fire; then the veto on the
answer and the note on a step's output, each with its precondition."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.checks.equations import false_equations
from agents.checks.facts import Result, Severity
from agents.checks.review import answer_facts, result_facts
from support.tiers import examples

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
       "×": lambda a, b: a * b, "÷": lambda a, b: a / b}


def written(value: Decimal, decimals: int, style: str) -> str:
    """``value`` rounded to ``decimals`` places, grouped and marked as ``style`` writes numbers."""
    text = f"{value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP):,.{decimals}f}"
    match style:
        case "en":
            return text
        case "plain":
            return text.replace(",", "")
        case "de":
            return text.replace(",", "\0").replace(".", ",").replace("\0", ".")
        case _:  # fr: a space groups, a comma marks decimals
            return text.replace(",", " ").replace(".", ",")


def value(text: str, style: str) -> Decimal:
    if style in ("de", "fr"):
        return Decimal(text.replace(" ", "").replace(".", "").replace(",", "."))
    return Decimal(text.replace(",", ""))


@settings(max_examples=examples(400), deadline=None)
@given(a=st.decimals(-10**7, 10**7, places=3), b=st.decimals(-10**7, 10**7, places=3),
       op=st.sampled_from(sorted(OPS)), shown=st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 4)),
       style=st.sampled_from(["en", "plain", "de", "fr"]), unit=st.sampled_from(["", " ms", " €", " km", "%"]),
       lead=st.sampled_from(["", "So ", "Die Differenz: ", "Donc, ", "Resultado: "]))
def test_a_true_equation_never_fires_however_its_numbers_are_written(a, b, op, shown, style, unit, lead):
    left, right = written(a, shown[0], style), written(b, shown[1], style)
    if op in "/÷" and value(right, style) == 0:
        return
    # computed from the numbers as written, as whoever wrote the equation did, then rounded for display
    result = written(OPS[op](value(left, style), value(right, style)), shown[2], style)
    text = f"{lead}{left}{unit} {op} {right}{unit} = {result}{unit}."
    assert false_equations(text) == [], text


@pytest.mark.parametrize("text", [
    "301209 / 254870 = 1.20",                      # the mental ratio of a small model, two decimals asked
    "8740.2 - 21560.45 = 13999.95 EUR",
    "Le total : 1 234,5 + 100 = 2 334,5.",
    "So, 301209 / 254870 = 1.20.",
    "3.1% - 2.8% = 0.5%",
])
def test_a_false_equation_fires(text):
    assert len(false_equations(text)) == 1


@pytest.mark.parametrize("text", [
    "2 + 3 * 4 = 14",                     # precedence: "3 * 4 = 14" is not the equation written
    "0.3 / 3.1 = 9.68%",                  # a percent on the result alone scales it
    "$2.81M - $2.63M = $180,000",         # scales that differ between the numbers
    "48,0 ms - 41,5 ms = -6,5 ms",        # a change written with its sign the other way: the magnitude holds
    "2.1 million / 0.35 million = 6.01",  # rounded operands: exact ones can make it true
    "x = 5 - 3 = 2", "5 - 3 ≈ 3", "httpx 0.28.1 - 2.32.3 = 1", "2024-12-06 - 2024-05-29 = 191 days",
])
def test_what_is_not_settled_or_true_does_not_fire(text):
    assert false_equations(text) == []


def test_a_false_equation_in_the_answer_is_a_veto_unless_a_source_writes_it():
    results = [Result(1, "customer", "E-3309", {"balance_eur": 8740.2}),
               Result(2, "customer", "E-5527", {"balance_eur": 21560.45})]
    fired = answer_facts("8740.2 - 21560.45 = 13999.95, so E-5527 owes more.", results, "Who owes more?")
    assert [f.severity for f in fired] == [Severity.CONTRADICTION]
    assert "is -12820.25" in fired[0].text
    quoted = [Result(1, "textbook", "the exercise", "Spot the error: 2.5 + 2.5 = 6.5")]
    assert answer_facts("It writes 2.5 + 2.5 = 6.5, which is wrong.", quoted, "What does it say?") == ()
    assert answer_facts("8740.2 - 21560.45 = -12820.25", results, "By how much?") == ()


def test_a_false_equation_in_a_steps_output_is_a_note_for_the_reviewer():
    results = [Result(1, "visitors", "A", 254870), Result(2, "visitors", "B", 301209),
               Result(3, None, "the ratio", "301209 / 254870 = 1.20")]
    facts = result_facts("How many times is B A?", results)
    notes = [f for f in facts if "writes" in f.text]
    assert [f.severity for f in notes] == [Severity.NOTE]
    assert notes[0].text == "Step 3 writes 301209 / 254870 = 1.20, but 301209 / 254870 is 1.181814."


@settings(max_examples=examples(200), deadline=None)
@given(a=st.decimals(-10**6, 10**6, places=2), b=st.decimals(-10**6, 10**6, places=2),
       op=st.sampled_from(["+", "-"]), lang=st.sampled_from(["en", "plain"]))
def test_a_result_far_from_the_operation_written_plainly_fires(a, b, op, lang):
    left, right = written(a, 2, lang), written(b, 2, lang)
    right_result = OPS[op](value(left, lang), value(right, lang))
    wrong = written(3 * abs(right_result) + 20, 2, lang)  # neither the result nor its magnitude
    assert len(false_equations(f"{left} {op} {right} = {wrong}")) == 1
