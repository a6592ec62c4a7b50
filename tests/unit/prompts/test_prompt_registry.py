"""Prompt templates: every shipped template loads, renders strictly, fits budgets by trimming only its
context, and its worked example parses with the same code that parses the model's reply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.llm import HOSTED, SMALL_LOCAL, ModelProfile
from agents.llm.profile import PROMPT_NAMES
from agents.react import ParallelReActTurn, ReActTurn
from planning import parse_plan, parse_router_decision
from planning.parse import extract_json_object, parse_classified_word
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


@pytest.mark.parametrize(("version", "last"), [
    ("v10", "Output only the JSON object."),
    ("v14", "Output only the numbered step lines and the answer line.")])
def test_guardrails_come_last_in_the_system_message(version: str, last: str) -> None:
    rendered = load_prompt("planner", version).render(**_values(load_prompt("planner", version)))
    assert rendered.messages[0]["content"].rstrip().endswith(last)


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=lambda p: p.name)
def test_each_profiles_templates_ask_for_the_reply_form_the_profile_parses(profile: ModelProfile) -> None:
    # No header says a template's reply form any more: the profile does, and the text must ask for that form.
    for role in ("router", "planner", "reflector"):
        template = load_prompt(role, profile.prompt(role))
        system = template.render(**_values(template)).messages[0]["content"]
        asks_json = system.rstrip().endswith("Output only the JSON object.")
        assert asks_json is (profile.reply_form(role) == "json"), (template.template_id, profile.reply_form(role))


@pytest.mark.parametrize(("name", "parse"), [
    ("router@v7", parse_router_decision),
    ("planner@v10", parse_plan),
    ("clarify_check@v3", parse_classified_word),
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
        assert [s.depends_on for s in parsed.steps] == [[], [], [2], [3], [1, 4]]


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
    for name, version in (("router", "v5"), ("planner", "v14")):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{version}.txt").write_text((PROMPTS_DIR / name / f"{version}.txt").read_text())
    v6 = (PROMPTS_DIR / "router" / "v5.txt").read_text().replace("# version: 5", "# version: 6")
    (tmp_path / "router" / "v6.txt").write_text(v6.replace("You route", "You now route"))
    (tmp_path / "router" / "notes.txt").write_text("not a version")
    registry = PromptRegistry(tmp_path)
    assert registry.available() == {"planner": ["v14"], "router": ["v5", "v6"]}
    latest, pinned = registry.load("router"), registry.load("router", "5")
    assert (latest.version, pinned.version) == ("v6", "v5")
    assert latest.fingerprint != pinned.fingerprint
    assert pinned.fingerprint == load_prompt("router", "v5").fingerprint  # same bytes, same fingerprint
    with pytest.raises(PromptNotFoundError, match="available: v5, v6"):
        registry.load("router", "v9")
    with pytest.raises(PromptNotFoundError, match="no prompt named 'ruoter'"):
        registry.load("ruoter")


@pytest.mark.parametrize(("text", "message"), [
    ("# name: x\n# version: 1\n=== user\nhi", "needs '=== system'"),
    ("# name: x\n# version: 2\n=== system\ns\n=== user\nu", "make it match the file path"),
    ("# name: x\n# version: 1\n=== system\n{{a}}\n=== user\nu", "declared variables"),
    ("# name: x\n# version: 1\n=== system\ns\n=== system\ns\n=== user\nu", "repeated section"),
    ("# name: x\n# version: 1\nstray text\n=== system\ns\n=== user\nu", "text before"),
])
def test_malformed_templates_are_rejected_with_the_fix(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "v1.txt").write_text(text)
    with pytest.raises(PromptFormatError, match=message):
        PromptRegistry(tmp_path).load("x")


@pytest.mark.parametrize("switch", ["reply: json", "clarify: checked", "classify: kind", "needs: first",
                                    "subject: asked", "second look: answered"])
def test_a_removed_header_switch_is_rejected_and_the_error_points_at_the_model_profile(tmp_path: Path,
                                                                                        switch: str) -> None:
    # What a model's replies look like and which strategies run are its ModelProfile's, never a prompt file's.
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "v1.txt").write_text(f"# name: x\n# version: 1\n# {switch}\n=== system\ns\n=== user\nu")
    with pytest.raises(PromptFormatError, match="ModelProfile") as err:
        PromptRegistry(tmp_path).load("x")
    assert f"# {switch.partition(':')[0]}:" in str(err.value) and "x/v1" in str(err.value)


SHIPPED_PROFILES = (HOSTED, SMALL_LOCAL)


def _versions_the_profiles_use() -> set[tuple[str, str]]:
    """Every (name, version) a shipped profile names, and the openings those templates start with."""
    used = {(name, profile.prompt(name)) for profile in SHIPPED_PROFILES for name in PROMPT_NAMES}
    openings = {load_prompt(name, version).opening for name, version in used}
    return used | {tuple(o.split("/")) for o in openings if o is not None}  # type: ignore[misc]


def test_every_version_a_shipped_profile_names_is_shipped() -> None:
    for profile in SHIPPED_PROFILES:
        for name in PROMPT_NAMES:
            assert load_prompt(name, profile.prompt(name)).version == profile.prompt(name), (profile.name, name)


def test_every_shipped_prompt_version_is_used_by_a_shipped_profile() -> None:
    """Issue 61: only the versions a profile uses ship; a retired one lives in prompts/CHANGELOG.md and git. The
    ReAct baselines' templates are the baseline's own, not a profile's."""
    shipped = {(name, version) for name, versions in available_prompts().items() for version in versions}
    unused = sorted(f"prompts/{name}/{version}.txt" for name, version in shipped - _versions_the_profiles_use()
                    if not name.startswith("react"))
    profiles = ", ".join(p.name for p in SHIPPED_PROFILES)
    assert not unused, (f"{', '.join(unused)}: used by no shipped profile ({profiles}); delete it (its history is "
                        "prompts/CHANGELOG.md and git) or name it in a profile")
    for name, version in shipped:  # every shipped file loads: no removed header switch hides in one
        load_prompt(name, version)


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
    for version in ("v14", "v10"):
        template = load_prompt("planner", version)
        rendered = template.render(**{**_values(template), "replan_context": "RESULTS <untrusted-data>x</untrusted-data>"})
        system, user = (m["content"] for m in rendered.messages)
        assert "RESULTS" not in system and "untrusted-data>x" not in system
        assert user.startswith("RESULTS") or "RESULTS" in user
