"""An argument repair may fix how a call asks (names, types, formats, spellings, a value out of a pasted document),
never switch what it asks about to another value the tool happens to know (no Ray). A model profile's
``Strategy.REPAIR_SCOPE``: the hosted default makes the repaired call."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from agents import tool
from agents.config import RuntimeConfig
from agents.llm import HOSTED, FunctionLLM, ModelProfile, Strategy
from agents.llm.base import LLMRequest
from agents.roles.executor import Executor
from agents.roles.messages import StepRequest
from agents.roles.repair_scope import changed_subject
from agents.tools.errors import ToolArgumentError
from planning.models import PlanStep

names = st.text(st.characters(categories=["L", "N"]), min_size=2, max_size=12)


@given(names, names, st.sampled_from(["lower", "upper", "title", "same"]))
def test_renaming_an_argument_or_recasing_its_value_keeps_the_subject(old_key: str, value: str, case: str) -> None:
    new_value = value if case == "same" else getattr(value, case)()
    assert changed_subject({old_key: value}, {"name": new_value}) is None


@given(st.lists(names, min_size=2, max_size=6))
def test_a_value_taken_out_of_the_rejected_text_keeps_the_subject(words: list[str]) -> None:
    document = " ".join(words)
    assert changed_subject({"text": document}, {"city": words[-1]}) is None


def test_another_spelling_a_type_or_a_format_keeps_the_subject() -> None:
    assert changed_subject({"service": "paiement"}, {"service": "payment"}) is None
    assert changed_subject({"company": "L'Oréal"}, {"company": "L'Oreal"}) is None
    assert changed_subject({"week": "11"}, {"week": 11}) is None
    assert changed_subject({"quarter": "third quarter 2025"}, {"quarter": "Q3 2025"}) is None
    assert changed_subject({"day": "12/03/2025"}, {"day": "2025-03-12"}) is None


def test_another_known_value_is_a_different_subject() -> None:
    assert changed_subject({"package": "L'Oréal Decathlon"}, {"package": "attrs"}) == ("L'Oréal Decathlon", "attrs")
    assert changed_subject({"team": "platform team", "since": "2024"}, {"team": "payments", "since": "2024"}) == \
        ("platform team", "payments")


KNOWN = ("attrs", "black", "httpx")
CALLS: list[str] = []
SCOPED = ModelProfile(strategies=frozenset({Strategy.REPAIR_SCOPE}))


@tool
def latest_release(package: str) -> str:
    """The latest release of a Python package."""
    CALLS.append(package)
    if package not in KNOWN:
        raise ToolArgumentError(f"unknown package {package!r}; known: {', '.join(KNOWN)}")
    return f"{package} 1.0 was released on 2024-01-01."


def _run(rejected: str, repaired: str, profile: ModelProfile = SCOPED):
    def model(request: LLMRequest) -> str:
        return '{"package": "%s"}' % repaired

    CALLS.clear()
    executor = Executor([latest_release], FunctionLLM(model, profile=profile), RuntimeConfig().executor_options())
    step = PlanStep(step_id=1, description=f"latest release of {rejected}", tool_name="latest_release",
                    tool_input={"package": rejected})
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5)
    return asyncio.run(executor.run(request, {}))


def test_a_repair_that_swaps_the_subject_fails_the_step_with_the_tools_error():
    outcome = _run("L'Oréal", "attrs")
    assert not outcome.ok and CALLS == ["L'Oréal"]  # the swapped call never ran
    assert "known: attrs" in outcome.error and "'attrs' where the plan had \"L'Oréal\"" in outcome.error


def test_a_hosted_model_s_repair_is_made_as_written():
    outcome = _run("L'Oréal", "attrs", profile=HOSTED)
    assert outcome.ok and CALLS == ["L'Oréal", "attrs"]


def test_a_repair_that_fixes_the_spelling_runs():
    outcome = _run("HTTPX ", "httpx")
    assert outcome.ok and CALLS == ["HTTPX ", "httpx"]


def test_a_call_that_named_nothing_in_text_has_no_subject_to_change() -> None:
    assert changed_subject({"city": 2.87}, {"city": "Paris"}) is None  # a number where the tool wants a name
    assert changed_subject({}, {"city": "Paris"}) is None  # the argument was left out
    assert changed_subject({"city": None, "unit": "km"}, {"city": "Paris", "unit": "km"}) is None
