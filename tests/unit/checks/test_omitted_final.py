"""The sound set's hint that an accepted answer leaves out the plan's final result: said only where exactly one
completed tool step combines two or more outputs into one figure and the answer writes figures, none of them
that one in any rounding, grouping or sign. A hint asks the reviewer once more, only for a model whose profile
takes that look (``Strategy.FINAL_FIGURE_LOOK``); it never vetoes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agents.checks.facts import Result
from agents.checks.sound import omitted_final


def _ratio(output: object = 0.660694576805) -> list[Result]:
    return [Result(1, "visitors", "Science Museum", 298112), Result(2, "visitors", "Tate Modern", 451210),
            Result(3, "calculator", "ratio", output, depends_on=(1, 2))]


def test_an_answer_restating_a_looked_up_figure_instead_of_the_computed_one_is_asked_about():
    hint = omitted_final("451210.00", _ratio())
    assert hint is not None
    assert "does not state 0.660694576805" in hint and "step 3 (calculator)" in hint
    assert "keep what it says and add 0.660694576805" in hint


def test_an_answer_with_both_looked_up_figures_but_not_their_difference_is_asked_about():
    results = [Result(1, "visitors", "", 88321), Result(2, "visitors", "", 142870),
               Result(3, "calculator", "", 54549, depends_on=(1, 2))]
    answer = "Deutsches Museum hat mehr Besucher: 142.870 gegenüber 88.321."
    assert omitted_final(answer, results) is not None


def test_an_answer_stating_the_computed_figure_in_any_usual_writing_is_not():
    for answer in ("0.66", "About 0.661 times.", "0,66", "Il y en a 0,66 fois plus."):
        assert omitted_final(answer, _ratio()) is None, answer
    difference = [Result(1, "visitors", "", 88321), Result(2, "visitors", "", 142870),
                  Result(3, "calculator", "", -54549, depends_on=(1, 2))]
    for answer in ("Deutsches Museum, um 54.549 mehr.", "by 54,549", "-54549", "54 549 de plus", "about 54,500"):
        assert omitted_final(answer, difference) is None, answer


def test_silent_when_the_answer_writes_no_figure_or_the_plan_has_no_single_figure_at_the_end():
    assert omitted_final("Tate Modern", _ratio()) is None  # "which is larger" needs no figure
    assert omitted_final("", _ratio()) is None and omitted_final(None, _ratio()) is None
    lookups = _ratio()[:2]
    assert omitted_final("451210", lookups) is None  # nothing computed
    one_input = [*lookups, Result(3, "calculator", "", 0.5, depends_on=(1,))]
    assert omitted_final("451210", one_input) is None
    two_finals = [*_ratio(), Result(4, "calculator", "", 749322, depends_on=(1, 2))]
    assert omitted_final("451210", two_finals) is None  # which one the task wants is the reviewer's call
    assert omitted_final("451210", _ratio("0.66 or 1.51")) is None  # two figures: not one final figure
    assert omitted_final("451210", _ratio("ok")) is None
    failed = [*lookups, Result(3, "calculator", "", None, failed=True, depends_on=(1, 2))]
    assert omitted_final("451210", failed) is None


_FIGURES = st.one_of(st.integers(-10**9, 10**9).map(float),
                     st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: abs(x) >= 0.01))


@given(_FIGURES, st.integers(0, 3), st.sampled_from(["en", "de", "fr", "plain"]),
       st.sampled_from(["{}", "The answer is {}.", "Rome, by {} people", "Es sind {} mehr."]))
def test_never_fires_on_an_answer_that_writes_the_computed_figure(figure, decimals, style, sentence):
    # A rule that fires on a right answer is a failure: the answer writes the final figure, rounded to a few
    # decimals and grouped the way its language does, so there must be no hint.
    text = f"{round(figure, decimals):,.{decimals}f}"
    if style == "de":
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    elif style == "fr":
        text = text.replace(",", " ").replace(".", ",")
    elif style == "plain":
        text = text.replace(",", "")
    results = [Result(1, "lookup", "", 2.5), Result(2, "lookup", "", 4.0),
               Result(3, "calculator", "", figure, depends_on=(1, 2))]
    assert omitted_final(sentence.format(text), results) is None


def test_the_hint_reaches_the_policy_only_from_a_built_in_set_only_on_an_accept_and_only_when_looked_for():
    from agents.checks.review import StepFacts, review_context
    from planning.models import Plan, PlanStep, Reflection, Scores

    plan = Plan(steps=[PlanStep(step_id=1, description="a", tool_name="visitors", tool_input={"site": "A"}),
                       PlanStep(step_id=2, description="b", tool_name="visitors", tool_input={"site": "B"}),
                       PlanStep(step_id=3, description="ratio", tool_name="calculator", depends_on=[1, 2],
                                tool_input={"expression": "{$step_1_result} / {$step_2_result}"})])
    views = [StepFacts(1, "a", "visitors", "completed", 298112), StepFacts(2, "b", "visitors", "completed", 451210),
             StepFacts(3, "ratio", "calculator", "completed", 0.660694576805)]

    def reviewed(action: str, checks: tuple[str, ...], look: bool = True) -> str:
        r = Reflection(scores=Scores(completeness=5, correctness=5, format=5), overall_pass=action == "accept",
                       action=action, answer="451210.00", feedback="f")
        return review_context(r, "How many times A is B?", views, plan, checks=checks,
                              final_figure_look=look).omits_final

    assert "0.660694576805" in reviewed("accept", ("sound",))
    assert "0.660694576805" in reviewed("accept", ("sound", "numeric"))
    assert reviewed("accept", ()) == ""  # the user turned the built-in sets off
    assert reviewed("replan", ("sound",)) == ""
    # A model whose profile takes no such look (the hosted default): the accept is not asked about.
    assert reviewed("accept", ("sound", "numeric"), look=False) == ""
