"""The hosted model profile's terse forms (router/v5, planner/v14, reflector/v11) and the small-local
profile's JSON forms (router/v7, planner/v10, reflector/v10): which profile uses which, the forms their texts
describe parse with the reply parsers, and the task-specific text comes after a prefix shared by every task
(prompt caching)."""

from __future__ import annotations

import pytest

from agents.llm import HOSTED, SMALL_LOCAL, ModelProfile
from agents.llm.profile import PROMPT_NAMES
from planning import parse_plan, parse_reflection
from planning.parse import parse_router_decision
from planning.stream import StreamingPlanParser
from prompts import load_prompt
from prompts.registry import DEFAULT_VERSIONS, PromptRegistry

ROLES = ("router", "planner", "reflector")
STATIC = {"tools": "T", "tool_purposes": "P", "max_steps": "20"}
"""The variables whose values are the same on every task of a run (the catalog, the caps)."""


def _system(name: str, version: str) -> str:
    return dict(load_prompt(name, version).sections)["system"]


def test_the_hosted_profile_uses_the_terse_defaults_and_the_small_one_the_json_forms() -> None:
    assert {r: DEFAULT_VERSIONS[r] for r in ROLES} == {"router": "v5", "planner": "v14", "reflector": "v11"}
    assert {r: load_prompt(r).version for r in ROLES} == {r: DEFAULT_VERSIONS[r] for r in ROLES}
    assert all(HOSTED.prompt(name) == DEFAULT_VERSIONS[name] for name in PROMPT_NAMES)
    assert {r: HOSTED.reply_form(r) for r in ROLES} == dict.fromkeys(ROLES, "terse")
    assert {r: SMALL_LOCAL.prompt(r) for r in ROLES} == {"router": "v7", "planner": "v10", "reflector": "v10"}
    assert {r: SMALL_LOCAL.reply_form(r) for r in ROLES} == dict.fromkeys(ROLES, "json")
    assert ModelProfile().prompt("planner") == "v14"  # a profile that names no version gets the hosted one
    assert PromptRegistry(defaults={"planner": "v10"}).load("planner").version == "v10"


def test_planner_v4_example_is_a_terse_plan_with_arguments_by_position() -> None:
    system = _system("planner", "v14")
    assert "# note" not in system  # no step notes: arguments by position keep a step short
    example = system[system.index("Example"):].split("\n", 1)[1]
    plan = StreamingPlanParser({"weather": ["city"], "calculator": ["expression"]})
    steps = plan.feed(example) + plan.close()
    assert [s.tool_input for s in steps] == [{"city": "Lisbon"}, {"city": "Oslo"}, {
        "expression": "{$step_1_result.temperature} - {$step_2_result.temperature}"}]
    assert [s.depends_on for s in steps] == [[], [], [1, 2]]


@pytest.mark.parametrize(("form", "reply", "action"), [
    ("accept C R F", "accept 5 5 4\nanswer: Lisbon is 3 degrees warmer than Oslo.", "accept"),
    ("retry C R F step N:", "retry 3 2 4 step 2: search Oslo instead", "retry_step"),
    ("replan C R F:", "replan 2 3 4: look up both cities", "replan"),
    ("escalate C R F:", "escalate 1 1 1: which Paris?", "escalate"),
])
def test_each_verdict_form_reflector_v5_describes_parses(form: str, reply: str, action: str) -> None:
    assert f"\n{form}" in _system("reflector", "v11")
    reflection = parse_reflection(reply)
    assert (reflection.action, reflection.overall_pass) == (action, action == "accept")
    assert reflection.scores.completeness == int(reply.split()[1])
    if action == "accept":
        assert reflection.answer == "Lisbon is 3 degrees warmer than Oslo."


def test_the_route_line_router_v5_describes_parses() -> None:
    assert "Reply with one line: the route, your confidence from 0 to 1, a colon, then" in _system("router", "v5")
    decision = parse_router_decision("plan 0.95: two temperatures to look up")
    assert (decision.route, decision.confidence, decision.answer) == ("plan", 0.95, None)
    decision = parse_router_decision("direct 0.9: Hello! How can I help?")
    assert (decision.route, decision.answer) == ("direct", "Hello! How can I help?")


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=lambda p: p.name)
def test_task_specific_text_comes_after_a_prefix_shared_by_every_task(profile: ModelProfile) -> None:
    for name in ROLES:
        template = load_prompt(name, profile.prompt(name))
        static = {k: v for k, v in STATIC.items() if k in template.variables}
        free = [v for v in template.variables if v not in static]
        one = template.render(**static, **{v: f"first {v}" for v in free}).messages
        two = template.render(**static, **{v: f"second {v}" for v in free}).messages
        assert one[0] == two[0], f"{template.template_id}: the system message must not depend on the task"


@pytest.mark.parametrize("profile", [HOSTED, SMALL_LOCAL], ids=lambda p: p.name)
def test_the_router_and_the_planner_add_the_session_history_to_the_user_message_only(profile: ModelProfile) -> None:
    for name in ("router", "planner"):
        template = load_prompt(name, profile.prompt(name))
        assert template.context_variables[0] == "history", template.template_id  # trimmed first
        assert "{{history}}" in dict(template.sections)["user"]
        assert "{{history}}" not in dict(template.sections)["system"]
    rendered = load_prompt("router", "v5").render(task="And Rome?", tool_purposes="P", history="Turn 1: Paris 2.1M")
    assert rendered.messages[1]["content"] == "Turn 1: Paris 2.1M\n\nTask: And Rome?"


def test_planner_v10_example_searches_the_named_entity_first_then_finds_the_other_ones_name() -> None:
    # The embedded model's planner form leaves out what the calls imply: the dependencies come from the references.
    system = _system("planner", "v10")
    assert system.count("Example") == 1
    example = system[system.index("Example"):].split("\n", 1)[1].split("\n]}", 1)[0] + "\n]}"
    plan = parse_plan(example)
    assert [s.tool_name for s in plan.steps] == ["search", "search", None, "search", "calculator"]
    assert [s.depends_on for s in plan.steps] == [[], [], [2], [3], [1, 4]]
    assert plan.steps[0].tool_input == {"query": "length of the Volga"}
    assert plan.steps[3].tool_input == {"query": "length of {$step_3_result}"}
