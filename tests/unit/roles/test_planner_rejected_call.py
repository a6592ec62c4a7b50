"""A replan that writes again a read call its tool rejected (an argument error, after the executor's repair) is
sent to the planner's repair round with the tool's own words, not run a second time; the rule keeps quiet where
its precondition fails: a write completed since, a write earlier in the same reply, an input from another step.
A model profile's ``Strategy.REJECTED_CALLS``: on the hosted default the replanned call is made again."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from support import wire
from support.local import plan_scripted, prompt_text, run_task

from agents import RuntimeConfig, tool
from agents.llm import HOSTED, FunctionLLM, LLMRequest, ModelProfile, Strategy
from agents.tools.errors import ToolArgumentError

SITES = {"Louvre": 8_700_000}
CITIES = {"Lyon": "Lyon compte 522 250 habitants."}
calls: list[tuple[str, str]] = []
schemas: list[str] = []
"""Each planner request's reply schema, in order (the tools it offers)."""


@tool
def visitors(site: str) -> int:
    """Visitors counted at a museum last year.

    Args:
        site: The museum's name.
    """
    calls.append(("visitors", site))
    if site not in SITES:
        raise ToolArgumentError(f"unknown site {site!r}; known: {', '.join(SITES)}")
    return SITES[site]


@tool
def encyclopedia(city: str) -> str:
    """The encyclopedia's passage about a city.

    Args:
        city: The city's name.
    """
    calls.append(("encyclopedia", city))
    return CITIES.get(city, f"No passage about {city}.")


@tool(permission="write")
def add_site(site: str) -> str:
    """Register a museum so that visitors counts it.

    Args:
        site: The museum's name.
    """
    SITES[site] = 1
    return f"registered {site}"


LYON = wire.plan(wire.step(1, "visitors", {"site": "Lyon"}))
REFUSES = ModelProfile(strategies=frozenset({Strategy.REJECTED_CALLS}))
FIRST_PLAN_CALLS = 2
"""The first plan's call and the executor's repair of its arguments (the same input again)."""


def scripted(replans: list[str], seen: list[str], profile: ModelProfile = REFUSES) -> FunctionLLM:
    """The first plan calls visitors('Lyon'); each replan answers with the next of ``replans``."""
    def planner(request: LLMRequest) -> str:
        seen.append(prompt_text(request))
        schemas.append(f"{json.dumps(request.json_schema)} {request.grammar or ''}")
        return LYON if len(seen) == 1 else replans[min(len(seen) - 2, len(replans) - 1)]

    # the executor's repair writes the same input again
    return plan_scripted(planner, executor='{"site": "Lyon"}', answer="522 250", profile=profile)


def run(llm: FunctionLLM) -> Any:
    calls.clear()
    schemas.clear()
    SITES.pop("Lyon", None)
    # a replanned write would wait for a human's approval first: not what these tests are about
    config = RuntimeConfig(confirm_replanned_writes=False)
    return asyncio.run(run_task(llm, "Combien d'habitants à Lyon ?", tools=[visitors, encyclopedia, add_site],
                                config=config))[0]


def test_the_rejected_call_written_again_goes_to_the_repair_round_and_the_tool_is_not_called_again() -> None:
    seen: list[str] = []
    better = wire.plan(wire.step(2, "encyclopedia", {"city": "Lyon"}))
    result = run(scripted([LYON, better], seen))
    assert result.status == "accepted", result.error
    assert calls.count(("visitors", "Lyon")) == FIRST_PLAN_CALLS, calls
    assert ("encyclopedia", "Lyon") in calls
    repair = seen[-1]
    assert "visitors already rejected exactly this call in this task: unknown site 'Lyon'" in repair
    assert "Use a different tool" in repair
    # the repair round asks afresh, with the refusal as a note (a small model copies its own last reply)
    assert "Note, from checking an earlier attempt" in repair and LYON not in repair
    # and offers every tool but the one that rejected every call the task made of it
    assert 'visitors(' in schemas[1] and 'visitors(' not in schemas[2] and 'encyclopedia(' in schemas[2]


def test_a_planner_that_insists_fails_the_plan_with_the_tools_words() -> None:
    result = run(scripted([LYON], []))
    assert result.status == "failed" and result.stopped_reason == "invalid_plan"
    assert "visitors already rejected exactly this call" in (result.error or "")
    assert calls.count(("visitors", "Lyon")) == FIRST_PLAN_CALLS


def test_a_hosted_model_s_replanned_call_is_made_again() -> None:
    seen: list[str] = []
    run(scripted([LYON], seen, profile=HOSTED))
    assert not any("already rejected" in text for text in seen)
    assert calls.count(("visitors", "Lyon")) > FIRST_PLAN_CALLS, calls


def test_after_a_write_in_the_same_reply_the_call_may_be_made_again() -> None:
    write_then_read = wire.plan(wire.step(2, "add_site", {"site": "Lyon"}),
                                wire.step(3, "visitors", {"site": "Lyon"}, deps=[2]))
    seen: list[str] = []
    result = run(scripted([write_then_read], seen))
    assert calls.count(("visitors", "Lyon")) == FIRST_PLAN_CALLS + 1, calls
    assert not any("already rejected" in text for text in seen)
    assert result.steps[-1].status == "completed"


def test_a_write_that_completed_since_clears_the_rejections() -> None:
    register = wire.plan(wire.step(2, "add_site", {"site": "Lyon"}))
    reviews: list[str] = []
    seen: list[str] = []
    inner = scripted([register, wire.plan(wire.step(3, "visitors", {"site": "Lyon"}))], seen)

    def answer(request: LLMRequest) -> str:
        if request.role != "reflector":
            return inner.fn(request)
        reviews.append(prompt_text(request))
        return wire.reflection("replan", (2, 2, 2), answer=None, feedback="now count its visitors") \
            if len(reviews) == 1 else wire.reflection(answer="1")

    result = run(FunctionLLM(answer, stream_chunk_size=24, profile=REFUSES))
    assert result.status == "accepted", result.error
    assert calls.count(("visitors", "Lyon")) == FIRST_PLAN_CALLS + 1, calls
    assert not any("already rejected" in text for text in seen)
