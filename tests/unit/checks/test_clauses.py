"""A figure typed into an expression from the wrong clause of the passage it used (``agents.checks.numeric.clauses`` and the
check built on it in ``agents.checks.numeric.misreads``): "began … AD 72 and was completed … AD 80" computed with 72 for the
completion. Code must refuse that, and stay silent on every figure taken from where the step's own words are
(no Ray, no model)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agents.checks.facts import Result, Severity
from agents.checks.numeric import check_answer, check_results
from agents.checks.numeric.clauses import naming_clauses, roots, split_clauses

BRIDGE = [{"title": "Golden Gate Bridge", "text": "Golden Gate Bridge: History: construction started in 1933, and the "
                                                   "bridge opened to traffic in 1937."}]
TOWER = [{"title": "Big Ben", "text": "Big Ben: History: the tower was begun in 1843 and was finished in 1859."}]
TASK = "When did the Golden Gate Bridge open, and how many years after Big Ben was finished was that?"


def _plan(expression: str, bridge_about: str = "opening of the Golden Gate Bridge",
          tower_about: str = "completion of Big Ben finished") -> list[Result]:
    return [Result(1, "doc_search", bridge_about, BRIDGE, about=bridge_about),
            Result(2, "doc_search", tower_about, TOWER, about=tower_about),
            Result(3, "calculator", "years between", float(eval(expression)), depends_on=(1, 2),  # noqa: S307
                   arguments=expression)]


def _typed(facts) -> list[str]:
    return [f.text for f in facts if f.severity is Severity.CONTRADICTION and " typed " in f.text]


def test_a_figure_typed_from_the_clause_about_something_else_is_a_contradiction_naming_the_right_one():
    facts = check_results(TASK, _plan("1933 - 1859"))  # the start of construction, not the opening
    [text] = _typed(facts)
    assert "1,933" in text and "construction started in 1933" in text and "Compute with 1,937" in text
    # It is the results' fault, so an accept resting on them is refused too.
    assert _typed(check_answer("It opened 74 years later.", _plan("1933 - 1859"), task=TASK))
    # and the reviewer is not told, beside it, to state the figure the wrong expression computed
    assert not any("state that figure" in f.text for f in facts)


def test_figures_typed_from_the_clauses_that_name_what_was_looked_up_are_silent():
    facts = check_results(TASK, _plan("1937 - 1859"))
    assert _typed(facts) == []
    assert any("state that figure" in f.text for f in facts)


def test_silent_when_unsure():
    # what the step looked up says nothing beyond the passage's title: no clause is "the" one
    assert _typed(check_results(TASK, _plan("1933 - 1859", bridge_about="Golden Gate Bridge"))) == []
    # a figure the task itself gives is the user's, not a misread
    assert _typed(check_results("How many years from 1933 to Big Ben's completion?", _plan("1933 - 1859"))) == []
    # references, not typed figures: what the calculator read is checked elsewhere
    refs = _plan("1937 - 1859")
    refs[2] = Result(3, "calculator", "years between", 78.0, depends_on=(1, 2),
                     arguments="{$step_1_result} - {$step_2_result}")
    assert _typed(check_results(TASK, refs)) == []
    # a typed figure no clause of the passage states (a typo, a figure from memory) is another check's business
    assert _typed(check_results(TASK, _plan("1936 - 1859"))) == []


def test_two_figures_where_the_steps_words_are_leave_it_unsettled():
    two = [{"title": "Eiffel Tower", "text": "Eiffel Tower: Height: the tower was 300 m tall when it opened and is "
                                             "330 m tall today; it weighs 7,300 tonnes."}]
    results = [Result(1, "doc_search", "height of the Eiffel Tower", two, about="height of the Eiffel Tower tall"),
               Result(2, "calculator", "in feet", 984.25, depends_on=(1,), arguments="300 * 3.28084")]
    assert _typed(check_results("How tall is the Eiffel Tower in feet?", results)) == []


def test_clauses_split_at_statements_not_inside_numbers():
    assert split_clauses("Rome had 2,750,000 people; Paris had 2,100,000, and Lyon 520,000.") == [
        "Rome had 2,750,000 people", "Paris had 2,100,000", "Lyon 520,000."]
    assert naming_clauses("It began in 72 and was completed in 80.", about="Colosseum completion",
                          title="Colosseum") == ["was completed in 80."]
    assert naming_clauses("It began in 72.", about="Colosseum", title="Colosseum") == []
    assert roots("The completion, completed!") == {"complet"} and roots("opening opened") == {"open"}


_NUMBER = re.compile(r"\d+(?:,\d{3})*")


@given(st.lists(st.one_of(st.sampled_from(["began", "in", "and", "was", "completed", ",", ";", ".", "but",
                                           "2,750,000", "72", "1173", "while", "AD"]),
                          st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True)), max_size=30))
def test_splitting_keeps_every_number_whole(words):
    text = " ".join(words)
    pieces = split_clauses(text)
    assert sorted(n for p in pieces for n in _NUMBER.findall(p)) == sorted(_NUMBER.findall(text))
    assert all(p == p.strip() and p for p in pieces)
