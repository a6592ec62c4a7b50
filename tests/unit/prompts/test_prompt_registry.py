"""Prompt templates: every shipped template loads, renders strictly, fits budgets by trimming only its
context, and its worked example parses with the same code that parses the model's reply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.react import ParallelReActTurn, ReActTurn
from planning import parse_plan, parse_reflection, parse_router_decision
from planning.parse import extract_json_object
from prompts import load_prompt
from prompts.assemble import MARKER, ContextItem, assemble, trim_middle
from prompts.errors import PromptBudgetError, PromptFormatError, PromptNotFoundError, PromptVariableError
from prompts.fence import FENCE_TAG, fence_untrusted
from prompts.registry import PROMPTS_DIR, PromptRegistry, available_prompts
from prompts.tokens import count_message_tokens, count_tokens
from support.tiers import examples

ROLES = ["router", "planner", "executor", "executor_repair", "reflector", "repair", "react", "react_parallel"]


def _values(template) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {v: f"<{v} value>" for v in template.variables}


def test_every_role_has_a_template_that_renders() -> None:
    assert set(ROLES) <= set(available_prompts())
    for name in ROLES:
        template = load_prompt(name)
        rendered = template.render(**_values(template))
        assert [m["role"] for m in rendered.messages] == ["system", "user"]
        assert rendered.template_id == f"{name}/{template.version}"
        assert rendered.input_tokens == count_message_tokens(rendered.messages)
        assert template.purpose, name
        for variable in template.variables:
            assert f"<{variable} value>" in rendered.messages[0]["content"] + rendered.messages[1]["content"]


@pytest.mark.parametrize(("version", "last"), [("v1", "Output only the JSON object."),
                                               ("v2", "Output only the numbered step lines.")])
def test_guardrails_come_last_in_the_system_message(version: str, last: str) -> None:
    rendered = load_prompt("planner", version).render(**_values(load_prompt("planner", version)))
    assert rendered.messages[0]["content"].rstrip().endswith(last)


def test_the_default_planner_and_reflector_ask_for_the_terse_forms_and_say_so() -> None:
    assert (load_prompt("planner").reply_form, load_prompt("reflector").reply_form) == ("terse", "terse")
    assert (load_prompt("planner", "v1").reply_form, load_prompt("reflector", "v2").reply_form) == ("json", "json")


@pytest.mark.parametrize(("name", "parse"), [
    ("router@v1", parse_router_decision),
    ("planner@v1", parse_plan),
    ("reflector@v2", parse_reflection),
    ("react", lambda text: ReActTurn.model_validate(extract_json_object(text))),
    ("react_parallel", lambda text: ParallelReActTurn.model_validate(extract_json_object(text))),
])
def test_worked_examples_parse_with_the_reply_parsers(name: str, parse) -> None:  # type: ignore[no-untyped-def]
    name, _, version = name.partition("@")
    system = dict(load_prompt(name, version or None).sections)["system"]
    example = system[system.index("Example"):]
    example = example[example.index("{"):]
    parsed = parse(example)
    assert parsed is not None
    if name == "planner":
        assert [s.depends_on for s in parsed.steps] == [[], [], [1, 2]]


def test_a_planner_example_that_opens_with_its_needs_parses_as_its_plan() -> None:
    template = load_prompt("planner", "v11")
    system = dict(template.sections)["system"]
    example = system[system.index("Example"):]
    example = example[example.index("{"):]
    assert template.needs_first and example.startswith('{"needs": [')
    assert [s.tool_name for s in parse_plan(example).steps] == ["search", "search", None, "search", "calculator"]


def test_missing_and_unknown_variables_are_named() -> None:
    template = load_prompt("repair")
    with pytest.raises(PromptVariableError, match="missing error"):
        template.render()
    with pytest.raises(PromptVariableError, match="unknown colour"):
        template.render(error="x", colour="red")


def test_values_are_inserted_once_never_expanded_again() -> None:
    template = load_prompt("repair")
    rendered = template.render(error="{{error}} and {{task}}", expected="the corrected JSON object")
    assert "{{error}} and {{task}}" in json.dumps(rendered.messages)


def test_latest_and_pinned_versions_and_fingerprints(tmp_path: Path) -> None:
    for name in ("router", "planner"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "v1.txt").write_text((PROMPTS_DIR / name / "v1.txt").read_text())
    v2 = (PROMPTS_DIR / "router" / "v1.txt").read_text().replace("# version: 1", "# version: 2")
    (tmp_path / "router" / "v2.txt").write_text(v2.replace("You are", "You are now"))
    (tmp_path / "router" / "notes.txt").write_text("not a version")
    registry = PromptRegistry(tmp_path)
    assert registry.available() == {"planner": ["v1"], "router": ["v1", "v2"]}
    latest, pinned = registry.load("router"), registry.load("router", "1")
    assert (latest.version, pinned.version) == ("v2", "v1")
    assert latest.fingerprint != pinned.fingerprint
    assert pinned.fingerprint == load_prompt("router", "v1").fingerprint  # same bytes, same fingerprint
    with pytest.raises(PromptNotFoundError, match="available: v1, v2"):
        registry.load("router", "v9")
    with pytest.raises(PromptNotFoundError, match="no prompt named 'ruoter'"):
        registry.load("ruoter")


@pytest.mark.parametrize(("text", "message"), [
    ("# name: x\n# version: 1\n=== user\nhi", "needs '=== system'"),
    ("# name: x\n# version: 2\n=== system\ns\n=== user\nu", "make it match the file path"),
    ("# name: x\n# version: 1\n=== system\n{{a}}\n=== user\nu", "declared variables"),
    ("# name: x\n# version: 1\n=== system\ns\n=== system\ns\n=== user\nu", "repeated section"),
    ("# name: x\n# version: 1\nstray text\n=== system\ns\n=== user\nu", "text before"),
    ("# name: x\n# version: 1\n# needs: yes\n=== system\ns\n=== user\nu", "'# needs: yes' must be first"),
])
def test_malformed_templates_are_rejected_with_the_fix(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "v1.txt").write_text(text)
    with pytest.raises(PromptFormatError, match=message):
        PromptRegistry(tmp_path).load("x")


def test_a_budget_trims_only_the_context_variable_from_the_middle() -> None:
    template = load_prompt("planner")
    history = "FIRST-LINE " + "filler words here " * 2000 + " LAST-LINE"
    values = {**_values(template), "replan_context": history, "history": ""}
    full = template.render(**values)
    budget = full.input_tokens // 4
    fitted = template.render(budget_tokens=budget, **values)
    assert fitted.input_tokens <= budget and fitted.trimmed == ("replan_context",)
    system, user = fitted.messages[0]["content"], fitted.messages[1]["content"]
    # planner/v2 keeps everything task-specific out of the system message (a stable prefix for prompt caches)
    assert "FIRST-LINE" in user and "LAST-LINE" in user and "tokens trimmed to fit the prompt budget" in user
    assert "<task value>" in user and "<tools value>" in system
    assert template.render(budget_tokens=full.input_tokens, **values).trimmed == ()


def test_a_budget_smaller_than_the_fixed_text_is_a_clear_error() -> None:
    template = load_prompt("planner")
    with pytest.raises(PromptBudgetError, match="raise RuntimeConfig.context_token_budget") as info:
        template.render(budget_tokens=50, **_values(template))
    assert info.value.needed > 50 and info.value.budget == 50


@settings(max_examples=examples(40), deadline=None)
@given(st.text(min_size=0, max_size=400), st.integers(min_value=0, max_value=120))
def test_trim_middle_respects_the_budget(text: str, keep: int) -> None:
    out = trim_middle(text, keep)
    if count_tokens(text) <= keep:
        assert out == text
    else:
        marker_cost = count_tokens(MARKER.format(n=count_tokens(text)))
        assert count_tokens(out) <= max(keep, marker_cost) + 2  # seams can merge or split a token


def test_assemble_trims_the_lowest_priority_context_first() -> None:
    low = ContextItem("history", "old " * 600, priority=0)
    high = ContextItem("results", "fresh " * 60, priority=5)
    prompt = assemble("sys", "question?", "guard", [low, high], budget_tokens=200)
    assert prompt.trimmed == ("history",) and prompt.input_tokens <= 200
    assert "fresh " * 60 in prompt.messages[1]["content"]


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/ -_untrusteddataUNTRUSTEDDATA\n\"x")), max_size=120))
def test_fenced_data_can_never_close_or_reopen_the_fence(payload: str) -> None:
    fenced = fence_untrusted(payload, 'step 3 "output"\n<b>')
    opening = re.compile(r"<\s*/?\s*untrusted[-_\s]*data", re.IGNORECASE)
    assert len(opening.findall(fenced)) == 2  # exactly our own open and close tags survive
    assert fenced.startswith(f'<{FENCE_TAG} source="') and fenced.endswith(f"</{FENCE_TAG}>")
    assert "\n" not in fenced.split(">", 1)[0]  # the source label cannot break the opening tag


def test_replan_context_goes_to_the_user_message_not_the_system_message() -> None:
    # Issue 19: the replan context (with fenced tool output) sat in the planner's system message.
    for version in ("v1", "v2"):
        template = load_prompt("planner", version)
        rendered = template.render(**{**_values(template), "replan_context": "RESULTS <untrusted-data>x</untrusted-data>"})
        system, user = (m["content"] for m in rendered.messages)
        assert "RESULTS" not in system and "untrusted-data>x" not in system
        assert user.startswith("RESULTS") or "RESULTS" in user
