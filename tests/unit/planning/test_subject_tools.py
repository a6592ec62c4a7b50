"""Tools named for what a task is about: only read tools whose own catalog lines say every content word of the
kind, never the tool that computed from nowhere, and nothing when the word says nothing in particular."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning.errors import PlanningError
from planning.subject_tools import MAX_SUBJECT_TOOLS, parse_subject, subject_note, tools_about

ENTRIES = {
    "encyclopedia": ("- encyclopedia(topic: str) -> text: The encyclopedia's passage about a city.\n"
                     "    topic: The city's name."),
    "customer": "- customer(customer_id: str) -> object: A customer record: id, name and balance.",
    "schedule_payment": "- schedule_payment(customer_id: str, amount: float) -> text [write]: Pay a customer.",
    "run_tests": "- run_tests(suite: str) -> text: Run one test suite.\n    suite: The suite's name.",
    "company_profile": "- company_profile(company: str) -> text: A short profile of a company.",
    "revenue": "- revenue(company: str, quarter: str) -> text: A company's revenue in one quarter.",
    "churn_rate": "- churn_rate(product: str) -> text: A product's monthly churn rate.",
    "calculator": "- calculator(expression: str) -> number: Evaluate arithmetic on a number of figures.",
}
READS = set(ENTRIES) - {"schedule_payment"}


@pytest.mark.parametrize(("kind", "tools"), [
    ("a city", ["encyclopedia"]),
    ("cities", ["encyclopedia"]),
    ("City", ["encyclopedia"]),
    ("a customer", ["customer"]),  # the write tool that also says "customer" is never suggested
    ("a test suite", ["run_tests"]),
    ("companies", ["company_profile", "revenue"]),
    ("a product", ["churn_rate"]),
    ("a planet", []),
    ("the", []),
    ("", []),
])
def test_the_tools_whose_lines_say_the_kind(kind: str, tools: list[str]) -> None:
    assert tools_about(kind, ENTRIES, reads=READS, exclude={"calculator"}) == tools


def test_the_tool_that_computed_from_nowhere_is_not_suggested() -> None:
    assert tools_about("figures", ENTRIES, reads=READS, exclude={"calculator"}) == []
    assert tools_about("figures", ENTRIES, reads=READS) == ["calculator"]
    assert tools_about("a number", ENTRIES, reads=READS) == [], "a stop word names nothing"


def test_a_word_too_many_tools_say_names_nothing_in_particular() -> None:
    many = {f"t{i}": f"- t{i}(x: str) -> text: A record of a thing." for i in range(MAX_SUBJECT_TOOLS + 1)}
    assert tools_about("a record", many, reads=set(many)) == []
    assert tools_about("a record", dict(list(many.items())[:MAX_SUBJECT_TOOLS]), reads=set(many)) == \
        list(many)[:MAX_SUBJECT_TOOLS]


@given(st.text(max_size=30), st.sets(st.sampled_from(sorted(ENTRIES))), st.sets(st.sampled_from(sorted(ENTRIES))))
def test_only_read_tools_not_excluded_and_never_too_many(kind: str, reads: set[str], exclude: set[str]) -> None:
    found = tools_about(kind, ENTRIES, reads=reads, exclude=exclude)
    assert set(found) <= reads - exclude and len(found) <= MAX_SUBJECT_TOOLS
    assert found == [name for name in ENTRIES if name in found]  # catalog order


def test_the_reply_is_read_and_an_unusable_one_is_refused_with_what_to_write() -> None:
    assert parse_subject('{"about": " a city "}') == "a city"
    with pytest.raises(PlanningError, match="name the kind of thing"):
        parse_subject('{"about": "  "}')
    with pytest.raises(PlanningError):
        parse_subject("a city")
    with pytest.raises(PlanningError):
        parse_subject('{"about": "' + "x" * 41 + '"}')


def test_the_note_names_one_tool_or_several() -> None:
    assert subject_note("a city", ["encyclopedia"]).startswith(
        "the tool whose description is about a city: encyclopedia.")
    assert "descriptions are about companies: company_profile, revenue." in subject_note(
        "companies", ["company_profile", "revenue"])
