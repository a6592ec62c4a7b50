"""planner/v2 and reflector/v3 (the terse forms): loadable, the defaults, their examples parse
with the reply parsers, and the task-specific text comes after a stable prefix (prompt caching)."""

from __future__ import annotations

from planning import parse_plan, parse_reflection
from planning.parse import parse_router_decision
from planning.stream import StreamingPlanParser
from prompts import load_prompt
from prompts.registry import DEFAULT_VERSIONS, PromptRegistry


def test_the_terse_versions_are_the_defaults() -> None:
    # planner/v5 and reflector/v4 are the embedded model's JSON forms: pinned as not the default. The hosted
    # defaults are the terse forms; router/v5 and reflector/v5 the lean ones (test_lean_prompts.py).
    assert (DEFAULT_VERSIONS["planner"], DEFAULT_VERSIONS["reflector"]) == ("v4", "v5")
    assert (load_prompt("planner").version, load_prompt("reflector").version) == ("v4", "v5")
    assert load_prompt("planner").reply_form == load_prompt("reflector").reply_form == "terse"
    assert load_prompt("router").version == "v5" and load_prompt("router").reply_form == "terse"
    assert PromptRegistry(defaults={"planner": "v1"}).load("planner").version == "v1"


def test_planner_v2_example_is_a_terse_plan() -> None:
    system = dict(load_prompt("planner", "v2").sections)["system"]
    example = system[system.index("Example"):].split("\n", 1)[1]
    plan = parse_plan(example)
    assert [s.tool_name for s in plan.steps] == ["weather", "weather", "calculator"]
    assert plan.steps[2].tool_input == {"expression": "{$step_1_result.temperature} - {$step_2_result.temperature}"}
    assert plan.steps[2].depends_on == [1, 2]


def test_reflector_v3_example_is_a_terse_verdict() -> None:
    system = dict(load_prompt("reflector", "v3").sections)["system"]
    example = system[system.index("Example"):].split("\n", 1)[1]
    reflection = parse_reflection(example)
    assert (reflection.action, reflection.overall_pass) == ("accept", True)


def test_task_specific_text_comes_after_a_prefix_shared_by_every_task() -> None:
    for name, version, static in (("planner", "v2", {"tools": "T", "max_steps": "20"}),
                                  ("planner", "v4", {"tools": "T", "max_steps": "20"}),
                                  ("router", "v3", {"tools": "T"}),
                                  ("reflector", "v3", {})):
        template = load_prompt(name, version)
        free = [v for v in template.variables if v not in static]
        one = template.render(**static, **{v: f"first {v}" for v in free}).messages
        two = template.render(**static, **{v: f"second {v}" for v in free}).messages
        assert one[0] == two[0], f"{name}/{version}: the system message must not depend on the task"


def test_router_v2_example_is_a_terse_decision() -> None:
    system = dict(load_prompt("router", "v2").sections)["system"]
    example = system[system.index("Example"):].split("\n", 1)[1]
    decision = parse_router_decision(example)
    assert (decision.route, decision.confidence, decision.answer) == ("plan", 0.95, None)


def test_planner_v3_drops_step_notes_and_gives_arguments_by_position() -> None:
    v2, v3 = (dict(load_prompt("planner", v).sections)["system"] for v in ("v2", "v3"))
    assert "# note" in v2 and "# note" not in v3
    example = v3[v3.index("Example"):].split("\n", 1)[1]
    plan = StreamingPlanParser({"weather": ["city"], "calculator": ["expression"]})
    steps = plan.feed(example) + plan.close()
    assert [s.tool_input for s in steps] == [{"city": "Lisbon"}, {"city": "Oslo"}, {
        "expression": "{$step_1_result.temperature} - {$step_2_result.temperature}"}]
    assert steps[2].depends_on == [1, 2]


def test_router_v3_and_planner_v4_add_the_session_history_to_the_user_message_only() -> None:
    """The new versions differ from router/v2 and planner/v3 only by the trimmable history in the user message
    (and the router's guardrail that fenced history is data)."""
    for name, old, new in (("planner", "v3", "v4"), ("router", "v2", "v3")):
        before, after = load_prompt(name, old), load_prompt(name, new)
        assert "history" in after.context_variables and after.context_variables[0] == "history"
        assert dict(before.sections)["system"] == dict(after.sections)["system"]
        assert "{{history}}" in dict(after.sections)["user"]
    rendered = load_prompt("router", "v3").render(task="And Rome?", tools="T", history="Turn 1: Paris 2.1M")
    assert rendered.messages[1]["content"] == "Turn 1: Paris 2.1M\n\nTask: And Rome?"


def test_planner_v6_example_is_a_short_json_plan_whose_dependencies_are_implied() -> None:
    # The embedded model's planner form leaves out what the calls imply (about half the tokens of each step).
    system = dict(load_prompt("planner", "v6").sections)["system"]
    example = system[system.index("Example"):].split("\n", 1)[1]
    plan = parse_plan(example)
    assert [s.tool_name for s in plan.steps] == ["search", "search", "calculator"]
    assert [s.depends_on for s in plan.steps] == [[], [], [1, 2]]
    assert plan.steps[0].description == "search query=length of the Danube"


def test_planner_v7_shows_a_look_up_that_needs_a_name_another_step_finds_first() -> None:
    # Its first example: search, a reasoning step that answers the name, a search with that name in its query.
    system = dict(load_prompt("planner", "v7").sections)["system"]
    first = system[system.index("Example"):].split("\n", 1)[1].split("\n]}", 1)[0] + "\n]}"
    plan = parse_plan(first)
    assert [s.tool_name for s in plan.steps] == ["search", None, "search"]
    assert [s.depends_on for s in plan.steps] == [[], [1], [2]]
    assert plan.steps[2].tool_input == {"query": "length of {$step_2_result}"}
    assert "Danube" in system[system.rindex("Example"):]  # planner/v6's example stays, second


def test_planner_v8_example_finds_one_name_first_and_searches_the_named_entity_directly() -> None:
    # One example holds both patterns: the name hop (search, reasoning, search with the name) only for the
    # entity the task does not name, and both figures from passages straight into the calculator.
    system = dict(load_prompt("planner", "v8").sections)["system"]
    assert system.count("Example") == 1
    example = system[system.index("Example"):].split("\n", 1)[1].split("\n]}", 1)[0] + "\n]}"
    plan = parse_plan(example)
    assert [s.tool_name for s in plan.steps] == ["search", None, "search", "search", "calculator"]
    assert [s.depends_on for s in plan.steps] == [[], [1], [2], [], [3, 4]]
    assert plan.steps[2].tool_input == {"query": "length of {$step_2_result}"}


def test_planner_v9_example_searches_the_named_entity_first_then_finds_the_other_ones_name() -> None:
    system = dict(load_prompt("planner", "v9").sections)["system"]
    assert system.count("Example") == 1
    example = system[system.index("Example"):].split("\n", 1)[1].split("\n]}", 1)[0] + "\n]}"
    plan = parse_plan(example)
    assert [s.tool_name for s in plan.steps] == ["search", "search", None, "search", "calculator"]
    assert [s.depends_on for s in plan.steps] == [[], [], [2], [3], [1, 4]]
    assert plan.steps[0].tool_input == {"query": "length of the Volga"}

