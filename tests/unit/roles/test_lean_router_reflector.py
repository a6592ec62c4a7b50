"""router/v5 and reflector/v11, the lean defaults for hosted models (issue 18's input-token targets): the
router sees what each tool is for and no argument schemas; the reviewer sees no tool catalog, one fenced line
a step holding its call and its result, and the facts code checked only when there are some. Both still take
the terse and the JSON replies, and the simulated model plays every suite's gold behaviour through them."""

from __future__ import annotations

import asyncio

import pytest
from support import wire
from support.local import run_task

from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, LLMRequest, ModelProfile
from agents.llm.simulated import LatencyModel, SimulatedLLM
from agents.roles.messages import StepView
from agents.roles.reflector import Reflector
from agents.roles.router import Router
from agents.tools.registry import ToolRegistry
from benchmarks.suite import SUITES, answer_matches, load_suite
from benchmarks.world import World, make_tools
from planning.models import Plan, PlanStep, RouterDecision
from planning.terse_line import describe_call
from prompts import load_prompt

TOOLS = make_tools(World.load(), time_scale=0.0)
CATALOG = ToolRegistry(TOOLS).catalog_text()
INSTANT = LatencyModel(ttft_s=0.0, decode_tokens_per_s=1e12, prefill_tokens_per_s=1e12)
RETIRED_V3_TOKENS = {"router": 231, "reflector": 345}
"""What router/v3 and reflector/v3, the terse forms v5 replaced, rendered with empty variables (measured from their
text in git before they were retired on 2026-12-02, prompts/CHANGELOG.md; their header switches left out)."""


def _fixed_tokens(name: str, version: str) -> int:
    template = load_prompt(name, version)
    return template.render(**{v: "" for v in template.variables}).input_tokens


def test_the_lean_versions_are_the_defaults_and_smaller_than_the_ones_they_replace() -> None:
    assert load_prompt("router").template_id == "router/v5"
    assert load_prompt("reflector").template_id == "reflector/v11"
    assert (HOSTED.prompt("router"), HOSTED.prompt("reflector")) == ("v5", "v11")
    assert _fixed_tokens("router", "v5") < RETIRED_V3_TOKENS["router"] - 35
    assert _fixed_tokens("reflector", "v11") < RETIRED_V3_TOKENS["reflector"] - 70
    # the embedded model's forms are untouched (measured on the real model)
    assert SMALL_LOCAL.prompt("router") == "v7" and SMALL_LOCAL.prompt("reflector") == "v10"


def _route(task: str, reply: str, history: str = "") -> tuple[LLMRequest, str]:
    seen: list[LLMRequest] = []

    def answer(request: LLMRequest) -> str:
        seen.append(request)
        return reply

    result = asyncio.run(Router(FunctionLLM(answer), CATALOG, RuntimeConfig().router_options()).route("t", task, history))
    return seen[0], result.value.route


def test_the_router_sees_each_tools_purpose_but_no_argument_schema() -> None:
    request, route = _route("What is the population of Velmora?", "plan 0.95: needs a look-up")
    system = request.messages[0]["content"]
    assert route == "plan"
    assert "- lookup: Look up one attribute of an entity" in system and "- calculator -> number:" in system
    assert "attribute: One of" not in system and "entity: str" not in system and "e.g." not in system
    other, _ = _route("Hello!", "direct 0.9: Hello!", history="<untrusted-data>turn 1</untrusted-data>")
    assert other.messages[0] == request.messages[0]  # a stable prefix: nothing task-specific in the system text
    assert other.messages[1]["content"].startswith("<untrusted-data>turn 1")


@pytest.mark.parametrize(("reply", "route"), [("clarify 0.8: Which file?", "clarify"),
                                              ("refuse 0.95: I cannot help with that.", "refuse"),
                                              (wire.route("direct", answer="4"), "direct")])
def test_the_router_still_takes_every_route_terse_or_json(reply: str, route: str) -> None:
    assert _route("x", reply)[1] == route


PLAN = Plan(steps=[PlanStep(step_id=1, description="Velmora's population", tool_name="lookup",
                            tool_input={"entity": "Velmora", "attribute": "population_millions"}),
                   PlanStep(step_id=2, description=describe_call("lookup", {"entity": "Rmoe", "attribute": "population_millions"}),
                            tool_name="lookup",
                            tool_input={"entity": "Rmoe", "attribute": "population_millions"}),
                   PlanStep(step_id=3, description=describe_call("calculator", {"expression": "{$step_1_result} - {$step_2_result}"}), tool_name="calculator",
                            tool_input={"expression": "{$step_1_result} - {$step_2_result}"}, depends_on=[1, 2])])


def _reflect(task: str, views: list[StepView], reply: str = "accept 5 5 5\nanswer: 1.2 million",
             checks: tuple[str, ...] = ("sound",)) -> LLMRequest:
    seen: list[LLMRequest] = []

    def answer(request: LLMRequest) -> str:
        seen.append(request)
        return reply

    options = RuntimeConfig(builtin_checks=checks).prompt_options()
    asyncio.run(Reflector(FunctionLLM(answer), options, CATALOG).reflect("t", task, PLAN, views))
    return seen[0]


def test_the_reviewer_reads_one_fenced_line_a_step_and_no_tool_catalog() -> None:
    views = [StepView(1, "a", "lookup", "completed", 3.4), StepView(2, "b", "lookup", "failed", error="no entity 'Rmoe'"),
             StepView(3, "c", "calculator", "skipped")]
    request = _reflect("How many more people live in Velmora than in Rome?", views, "replan 2 2 4: spell Rome")
    system, user = (m["content"] for m in request.messages)
    assert "lookup" not in system and "Look up one attribute" not in user  # no catalog
    assert user.split("Steps:\n", 1)[1].splitlines()[:5] == [
        '<untrusted-data source="step results">',
        # by position, as the planner writes it; a description the planner wrote itself is its note
        '#1 lookup ok ("Velmora", "population_millions") # Velmora\'s population → 3.4',
        '#2 lookup failed ("Rmoe", "population_millions"): no entity \'Rmoe\'',
        '#3 calculator skipped ("$1 - $2")',
        "</untrusted-data>"]
    assert "Plan:" not in user and "Results:" not in user


def test_the_facts_code_checked_are_shown_only_when_there_are_some() -> None:
    quiet = _reflect("What is the population of Velmora?", [StepView(1, "a", "lookup", "completed", 3.4)])
    assert "Checked by code" not in quiet.messages[1]["content"]
    views = [StepView(1, "a", "lookup", "completed", 2.1), StepView(2, "b", "lookup", "completed", 2.8),
             StepView(3, "c", "calculator", "completed", -0.7)]
    # The numeric set's facts: a difference asked as a size, computed negative.
    loud = _reflect("How many more people live in the larger of Velmora and Rome?", views, checks=("sound", "numeric"))
    assert "Checked by code:\n- CONTRADICTION: " in loud.messages[1]["content"]
    assert "CONTRADICTION" in loud.messages[0]["content"]  # the instruction that goes with it


@pytest.mark.parametrize("suite", SUITES)
def test_the_simulated_model_plays_every_suite_through_the_lean_defaults(suite: str) -> None:
    """As the benchmark runs them (default versions): the right answer, 3 calls a task plus 2 a replan; the
    repair suite's failed steps are read as failed from the one-line form."""
    tasks = load_suite(suite, None if suite == "repair" else 8)  # repair-024 is the one replanned task
    llm = SimulatedLLM([t.gold for t in tasks], INSTANT)
    config = RuntimeConfig(max_steps=64, token_budget=None, max_llm_calls=200)

    async def run_all() -> list:
        return [(t, (await run_task(llm, t.text, tools=TOOLS, config=config))[0]) for t in tasks]

    replans = 0
    for t, result in asyncio.run(run_all()):
        # the gold answer, or the plan's draft filled with the computed figure, which the reviewer confirmed
        assert result.status == "accepted", (t.id, result.error)
        assert result.answer == t.gold.answer or answer_matches(result.answer or "", t.answer_number), t.id
        assert result.usage.total.llm_calls == 3 + 2 * result.replans
        assert result.usage.by_role["router"].input_tokens < 300
        replans += result.replans
    if suite == "repair":
        assert replans > 0  # an ambiguous typo still goes back to the planner


def test_a_question_back_on_a_task_that_names_everything_is_planned_and_says_so():
    # The numeric set's heuristic (capitalised words are names): by default the model's question back stands.
    reply = '{"route": "clarify", "confidence": 0.9, "reason": "\'Cairo\' and \'France\' are never named", "answer": "Which two?"}'
    task = "Which covers the larger area, Cairo or France?"

    json_router = ModelProfile(prompts={"router": "v7"}, reply_forms={"router": "json"})  # no clarify check

    def route(checks: tuple[str, ...]) -> RouterDecision:
        config = RuntimeConfig(builtin_checks=checks)
        llm = FunctionLLM(lambda request: reply, profile=json_router)
        return asyncio.run(Router(llm, CATALOG, config.router_options()).route("t", task)).value

    assert route(("sound",)).route == "clarify"
    decision = route(("sound", "numeric"))
    assert decision.route == "plan" and decision.answer is None
    assert decision.reason.startswith("planned by code: the task names Cairo, France") and "never named" in decision.reason
