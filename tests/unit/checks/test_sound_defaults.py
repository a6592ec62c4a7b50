"""The default check set is sound: on a right answer it never vetoes, never asks for a second review, and the
policy accepts what the reviewer accepted. Each known false-veto class of the numeric heuristics is reproduced as a
right answer here (versions, dates, JSON rows, counts the model made, figures only in a write call's arguments,
"2.45M" without a currency, locale grouping, "times smaller", "total remaining", signed changes), with values drawn
by hypothesis: a default rule that fires on any of them fails the test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.checks.facts import Result, Severity
from agents.checks.review import StepFacts, answer_facts, result_facts, review_context
from planning.models import Plan, PlanStep, Reflection, Scores
from planning.policy import Accept, decide
from support.tiers import examples


@dataclass(frozen=True)
class Case:
    """A task, its steps (tool, arguments, output) and the right answer."""

    task: str
    steps: tuple[tuple[str | None, dict[str, Any], Any], ...]
    answer: str


def _plan_and_views(case: Case) -> tuple[Plan, list[StepFacts]]:
    steps, views = [], []
    for i, (tool, args, output) in enumerate(case.steps, 1):
        deps = list(range(1, i)) if tool in ("calculator", None) else []
        steps.append(PlanStep(step_id=i, description=f"step {i}", tool_name=tool, tool_input=args, depends_on=deps))
        views.append(StepFacts(i, f"step {i}", tool, "completed", output))
    return Plan(steps=steps), views


def _accept(answer: str) -> Reflection:
    return Reflection(scores=Scores(completeness=5, correctness=5, format=5), overall_pass=True, action="accept",
                      answer=answer)


def _assert_silent(case: Case, checks: tuple[str, ...] = ("sound",)) -> None:
    plan, views = _plan_and_views(case)
    context = review_context(_accept(case.answer), case.task, views, plan, checks=checks)
    assert context.contradictions == (), context.contradictions
    assert context.answer_only
    if "numeric" not in checks:
        assert not context.states_computed  # no second review on a low score either
    assert decide(context) == Accept(case.answer)


def _versions(a: tuple[int, int, int], b: tuple[int, int, int]) -> Case:
    newer = "httpx" if a > b else "requests"
    return Case("Which package had the more recent latest release, httpx or requests?",
                (("pypi", {"package": "httpx"}, f"httpx {'.'.join(map(str, a))} was released on 2024-12-06."),
                 ("pypi", {"package": "requests"}, f"requests {'.'.join(map(str, b))} was released on 2024-05-29.")),
                f"{newer}, released on 2024-12-06." if newer == "httpx" else f"{newer}.")


def _years_between(first: int, gap: int, day: int) -> Case:
    return Case("How many years after Google was Facebook founded?",
                (("wiki", {"q": "Google founded"}, f"Google was founded on September {day}, {first} by Larry Page."),
                 ("wiki", {"q": "Facebook founded"}, f"Facebook was founded on February {day}, {first + gap}."),
                 ("calculator", {"expression": f"{first + gap} - {first}"}, gap)),
                f"{gap} years.")


def _json_rows(customer: str, orders: int, row_id: int) -> Case:
    return Case(f"How many orders did {customer} place in March?",
                (("sql", {"query": f"SELECT count(*) AS orders FROM orders WHERE customer = '{customer}'"},
                  [{"id": row_id, "customer_id": row_id + 7, "month": "2024-03", "orders": orders, "status": "ok"}]),),
                f"{customer} placed {orders} orders in March.")


def _a_count_the_model_made(names: list[str]) -> Case:
    return Case("How many cities in the list have more than a million people?",
                (("cities", {"region": "Europe"}, names),),  # the reviewer counts them itself
                f"{len(names)} cities.")


def _written_only(total: int) -> Case:
    return Case("Add up the invoice lines and send the total to accounting.",
                (("send_report", {"to": "accounting", "total": total}, "sent"),),
                f"Sent the total of {total:,} to accounting.")


def _scaled_without_currency(units: int) -> Case:
    return Case("How many units shipped in the third quarter?",
                (("sales", {"quarter": "Q3"}, f"Q3 shipments: {units / 100:.2f}M units."),),
                f"{units / 100:.2f} million units shipped in Q3.")


def _locale(city: str, people: int, style: str) -> Case:
    written = {"de": f"{people:,}".replace(",", "."), "fr": f"{people:,}".replace(",", "\u202f"),
               "es": f"{people / 1e6:.2f}".replace(".", ",") + " millones"}[style]
    return Case(f"Wie viele Einwohner hat {city}?" if style == "de" else f"Combien d'habitants compte {city} ?",
                (("stats", {"city": city}, f"{city}: {written} Einwohner (2023)."),),
                f"{city} hat {written} Einwohner.")


def _times_smaller(small: int, large: int) -> Case:
    return Case("How many times smaller is the area of Rome than that of London? Give two decimals.",
                (("search", {"query": "area of Rome"}, [{"title": "Rome", "text": f"Area: Rome covers {small:,} km²."}]),
                 ("search", {"query": "area of London"}, [{"title": "London", "text": f"Area: London covers {large:,} km²."}]),
                 ("calculator", {"expression": "{$step_2_result} / {$step_1_result}"}, large / small)),
                f"About {large / small:.2f} times smaller.")


def _total_remaining(budget: int, spent: int) -> Case:
    return Case("What is the total remaining budget after this month's spending?",
                (("budget", {"query": "annual budget amount"},
                  [{"title": "Budget", "text": f"Budget: the annual amount is {budget:,} euros."}]),
                 ("budget", {"query": "amount spent this month"},
                  [{"title": "Spending", "text": f"Spending: the amount spent this month was {spent:,} euros."}]),
                 ("calculator", {"expression": "{$step_1_result} - {$step_2_result}"}, budget - spent)),
                f"{budget - spent:,} euros remain.")


def _signed_change(before: int, drop: int) -> Case:
    return Case("By how much did the p95 latency change between the two releases?",
                (("metrics", {"release": "1.4.0"}, f"p95 latency: {before} ms"),
                 ("metrics", {"release": "1.5.0"}, f"p95 latency: {before - drop} ms"),
                 ("calculator", {"expression": f"{before - drop} - {before}"}, -drop)),
                f"p95 fell by {drop} ms (from {before} ms to {before - drop} ms).")


_version = st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(0, 12))
_NAMES = ["Berlin", "Madrid", "Rome", "Paris", "Vienna", "Warsaw", "Hamburg", "Budapest", "Bucharest", "Barcelona",
          "Munich", "Milan", "Prague", "Sofia", "Brussels", "Birmingham"]
CLASSES = {
    "versions": st.builds(_versions, _version, _version).filter(lambda c: "0.0.0" not in str(c)),
    "dates": st.builds(_years_between, st.integers(1900, 2010), st.integers(1, 14), st.integers(1, 28)),
    "json_rows": st.builds(_json_rows, st.sampled_from(["Alice Martin", "Jürgen Weiß", "Lucía Pérez"]),
                           st.integers(10, 500), st.integers(1, 99999)),
    "model_counts": st.builds(_a_count_the_model_made, st.lists(st.sampled_from(_NAMES), min_size=10, max_size=16)),
    "write_args": st.builds(_written_only, st.integers(1000, 10**7)),
    "scale_without_currency": st.builds(_scaled_without_currency, st.integers(101, 99999)),
    "locale": st.builds(_locale, st.sampled_from(["Wien", "Lyon", "Sevilla"]), st.integers(100_000, 9_999_999),
                        st.sampled_from(["de", "fr", "es"])),
    "times_smaller": st.builds(_times_smaller, st.integers(100, 5000), st.integers(5001, 300_000)),
    "total_remaining": st.builds(_total_remaining, st.integers(5000, 10**6), st.integers(100, 4999)),
    "signed_change": st.builds(_signed_change, st.integers(100, 900), st.integers(1, 99)),
}


@pytest.mark.parametrize("kind", sorted(CLASSES))
@settings(max_examples=examples(30), deadline=None)
@given(data=st.data())
def test_the_default_set_never_vetoes_a_right_answer_of_a_known_false_veto_class(kind, data):
    _assert_silent(data.draw(CLASSES[kind]))


@settings(max_examples=examples(200), deadline=None)
@given(task=st.text(max_size=80), outputs=st.lists(st.one_of(st.text(max_size=120), st.integers(), st.floats(
       allow_nan=False), st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=3)), max_size=4),
       answer=st.text(min_size=1, max_size=120).filter(lambda a: "$step_" not in a and "=" not in a))
def test_the_default_set_vetoes_no_answer_that_holds_no_unfilled_reference_and_no_equation(task, outputs, answer):
    case = Case(task, tuple(("tool", {"q": str(i)}, out) for i, out in enumerate(outputs)), answer)
    _assert_silent(case)
    plan, views = _plan_and_views(case)
    from agents.checks.review import evidence_of

    assert all(f.severity is Severity.NOTE for f in result_facts(task, evidence_of(views, plan)))


def test_the_unfilled_reference_veto_holds_only_its_precondition():
    results = [Result(1, "lookup", "x", "42")]
    fired = answer_facts("The total is $step_3_result.", results, "What is the total?")
    assert [f.severity for f in fired] == [Severity.CONTRADICTION] and "$step_3_result" in fired[0].text
    # every spelling the plan reads is a placeholder, not only the one the prompts show
    fired = answer_facts("The total is ${step_3_result}.", results, "What is the total?")
    assert [f.severity for f in fired] == [Severity.CONTRADICTION] and "${step_3_result}" in fired[0].text
    # a task that itself writes the reference syntax may rightly be answered with it
    assert answer_facts("Write $step_3_result.", results, "How do I refer to $step_3_result?") == ()
    # so may one whose tool returned such text itself (a template, a log line): quoting it is no placeholder
    template = [Result(1, "render", "the template", "Dear $step_3_result, welcome.")]
    assert answer_facts("It reads: Dear $step_3_result, welcome.", template, "What does the template say?") == ()
    assert answer_facts("The total is 42.", results, "What is the total?") == ()
    assert answer_facts(None, results, "What is the total?") == ()


def test_the_default_notes_are_observations_never_a_number_to_use():
    case = _years_between(1998, 6, 4)
    plan, views = _plan_and_views(case)
    from agents.checks.review import evidence_of

    views[0] = StepFacts(1, "step 1", "wiki", "failed", None)
    facts = result_facts("Compare Paris and Rome.", evidence_of(views, plan))
    assert facts and all(f.severity is Severity.NOTE for f in facts)
    assert not any("Compute with" in f.text or "state that figure" in f.text for f in facts)


@pytest.mark.parametrize("case", [_versions((0, 28, 1), (2, 32, 3)), _years_between(1998, 6, 4)])
def test_the_one_number_reader_keeps_the_numeric_set_silent_on_versions_and_dates(case):
    # The two illustrations: "2.32 is larger" read from versions, and "Compute with 4" (the day of the
    # month) told to the planner. Neither is a figure to the shared reader, so not to the numeric set either.
    _assert_silent(case, checks=("sound", "numeric"))
    plan, views = _plan_and_views(case)
    from agents.checks.review import evidence_of

    texts = [f.text for f in result_facts(case.task, evidence_of(views, plan), ("sound", "numeric"))]
    assert not any("The larger is" in t or "Compute with" in t for t in texts), texts


@pytest.mark.parametrize("kind", sorted(CLASSES))
@settings(max_examples=examples(15), deadline=None)
@given(data=st.data())
def test_the_numeric_set_is_silent_on_these_classes_too_but_is_no_sound_set(kind, data):
    # Each class was a false veto or a code rewrite of the numeric rules; the one number reader and their
    # narrowed wordings keep them silent here. They remain heuristics (docs/checks.md): opt-in only.
    case = data.draw(CLASSES[kind])
    _assert_silent(case, checks=("sound", "numeric"))
    plan, views = _plan_and_views(case)
    from agents.engine.code_replans import arithmetic_replan

    assert arithmetic_replan(case.task, plan, views, ("sound", "numeric")) is None
