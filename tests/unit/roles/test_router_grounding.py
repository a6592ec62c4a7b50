"""A question back must be grounded in the task (``Strategy.CLARIFY_CHECK``, the small-model profile with its
router/v7): the words its reason quotes are the user's own, and a narrow follow-up (``clarify_check``) finds words
of the task that point at something never named; otherwise the task is planned and the reason says code decided."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, ModelProfile, Strategy
from agents.roles.router import Router
from planning.grounded_question import written_in
from prompts import PromptFormatError
from prompts.registry import parse_template


def _route(reply: dict, task: str, history: str = "",  # type: ignore[no-untyped-def]
           profile: ModelProfile = SMALL_LOCAL, check_word: str | None = "NOT ASKED", calls: list | None = None,
           check_kind: str | None = None):
    """Route ``task`` with a model that replies ``reply`` to the router and ``check_word`` (of ``check_kind``, when
    given) to the follow-up."""
    def answer(request) -> str:  # type: ignore[no-untyped-def]
        checking = "CHECK ONE THING" in request.messages[0]["content"]
        (calls if calls is not None else []).append("check" if checking else "route")
        if checking:
            assert check_word != "NOT ASKED", "the follow-up was asked where it should not be"
            return json.dumps({"word": check_word, **({"kind": check_kind} if check_kind else {})})
        return json.dumps(reply)

    router = Router(FunctionLLM(answer, profile=profile), "lookup: a population",
                    RuntimeConfig().router_options())
    return asyncio.run(router.route("t1", task, history)).value


def _clarify(reason: str) -> dict:
    return {"route": "clarify", "confidence": 0.9, "reason": reason, "answer": "Which one do you mean?"}


def test_a_question_back_the_follow_up_confirms_is_kept():
    calls: list = []
    decision = _route(_clarify("'the two' never says which"), "Which of the two is cheaper?", check_word="the two",
                      calls=calls)
    assert decision.route == "clarify" and decision.answer == "Which one do you mean?"
    assert calls == ["route", "check"]


def test_a_question_back_the_follow_up_does_not_confirm_is_planned():
    for word in (None, "", "Kündigungsquote"):  # nothing found, or words the task does not say
        decision = _route(_clarify("'Kontor' never says what"), "Wie hoch ist die Quote von Kontor?",
                          check_word=word)
        assert decision.route == "plan" and decision.reason.startswith("planned by code: asked again")


def test_the_routers_own_quote_may_be_a_translation():
    """Only the follow-up's words must be the task's: a German question back quoted in English stands."""
    decision = _route(_clarify("'the two' never says which"), "Vergleiche die beiden und sag, welcher billiger ist.",
                      check_word="die beiden")
    assert decision.route == "clarify"


def test_a_question_back_about_a_named_task_is_planned_with_the_reason():
    decision = _route(_clarify("'Google' is never named"), "How many years after Google was Facebook founded?",
                      check_word=None)
    assert decision.route == "plan" and decision.answer is None
    assert decision.reason.startswith("planned by code: asked again, the model found no word")


def test_words_from_an_earlier_turn_ground_a_question_back():
    decision = _route(_clarify("'the capital' never says which"), "And its size?", history="the capital of Norway",
                      check_word="its")
    assert decision.route == "clarify"


def test_a_profile_without_the_strategy_trusts_the_model_and_asks_nothing_more():
    assert SMALL_LOCAL.uses(Strategy.CLARIFY_CHECK) and not HOSTED.uses(Strategy.CLARIFY_CHECK)
    unchecked = SMALL_LOCAL.model_copy(update={"strategies": SMALL_LOCAL.strategies - {Strategy.CLARIFY_CHECK}})
    for profile in (unchecked, HOSTED):  # the JSON form of router/v7, the terse one of router/v5
        calls: list = []
        decision = _route(_clarify("the task is vague"), "How big is Rome?", profile=profile, calls=calls)
        assert decision.route == "clarify"
        assert calls == ["route"]
    # a template cannot turn it on: the header that did is refused
    text = "# name: router\n# version: 9\n# clarify: checked\n# variables: task\n=== system\nx\n=== user\n{{task}}\n"
    with pytest.raises(PromptFormatError, match="unknown header line\\(s\\) # clarify:"):
        parse_template(text, name="router", version="v9")


def test_other_routes_are_untouched_and_ask_nothing_more():
    calls: list = []
    direct = {"route": "direct", "confidence": 0.9, "reason": "a greeting", "answer": "Hello!"}
    assert _route(direct, "Hello", calls=calls).route == "direct" and calls == ["route"]


_words = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=12)


@given(st.lists(_words, min_size=1, max_size=4), st.lists(_words, max_size=6), st.lists(_words, max_size=6))
def test_any_run_of_the_tasks_words_is_written_in_it(words, before, after):
    """Whatever the language, words cut from the task itself are never overruled."""
    task = " ".join([*before, *words, *after]) + "?"
    assert written_in(" ".join(words), task, "")


def test_a_word_the_model_calls_a_noun_name_or_id_is_not_pointing():
    """clarify_check/v3: the model names the kind of its word from a closed set; a question back stands only on a
    pronoun or a demonstrative it wrote."""
    for word, kind in (("saldo", "noun"), ("INC-6023", "id"), ("catalogue", "name")):
        task = f"Which {word} was slower, A or B?"
        decision = _route(_clarify(f"'{word}' never says what"), task, check_word=word, check_kind=kind)
        assert decision.route == "plan" and f"found {word!r}, a {kind}: it names what it means" in decision.reason
    kept = _route(_clarify("'them' never says what"), "Compare them.", check_word="them", check_kind="pronoun")
    assert kept.route == "clarify"
