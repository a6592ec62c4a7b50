"""A role's ``warm_up`` loads what its first call would: its templates and the tokenizer. The role actors run it
when they start (``tests/unit/cluster/test_actors_warm_up.py``). In the demo the tokenizer's load alone put 0.4 s
before the router's model call, and the reviewer's first prompt took 0.8 s to build, both on the first task's
critical path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import prompts.registry
from agents.config import RuntimeConfig
from agents.llm import HOSTED, SMALL_LOCAL, FunctionLLM, ModelProfile
from agents.roles.executor import Executor
from agents.roles.messages import StepView
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router

CONFIG = RuntimeConfig()
CATALOG = "- lookup(city: str) -> number: The population of a city."
SCHEMAS = {"lookup": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
REPLIES = {
    "router": '{"route": "plan", "confidence": 0.9, "reason": "a look-up", "answer": null}',
    "planner": '{"steps": [{"step_id": 1, "tool_name": "lookup", "tool_input": {"city": "Rome"}}]}',
    "reflector": ('{"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": true, '
                  '"action": "accept", "retry_details": null, "feedback": "", "answer": "2.8 million"}'),
}


def _llm(profile: ModelProfile = SMALL_LOCAL) -> FunctionLLM:
    """The embedded model's prompts (and the hosted ones where a test says): the templates warm_up must load."""
    return FunctionLLM(lambda request: REPLIES[request.role], profile=profile)


@pytest.fixture
def cold_registry(monkeypatch):
    """A registry that has loaded nothing yet, as in a freshly started actor."""
    prompts.registry._default.cache_clear()
    yield
    prompts.registry._default.cache_clear()


@pytest.fixture
def no_file_reads(monkeypatch):
    def forbid():
        def read_text(self: Path, *args, **kwargs):
            raise AssertionError(f"the first call read {self}: warm_up should have loaded it")

        monkeypatch.setattr(Path, "read_text", read_text)

    return forbid


async def _first_calls(router: Router, planner: Planner, reflector: Reflector) -> None:
    await router.route("t", "How many people live in Rome?")
    items = [item async for item in planner.plan("t", "How many people live in Rome?")]
    plan = items[-1].plan
    await reflector.reflect("t", "How many people live in Rome?", plan,
                            [StepView(1, "population of Rome", "lookup", "completed", 2.8)])


@pytest.mark.parametrize("profile", [SMALL_LOCAL, HOSTED], ids=lambda p: p.name)
def test_a_warmed_role_reads_no_template_in_its_first_call(cold_registry, no_file_reads, profile):
    router = Router(_llm(profile), CATALOG, CONFIG.router_options())
    planner = Planner(_llm(profile), SCHEMAS, CATALOG, CONFIG.planner_options())
    reflector = Reflector(_llm(profile), CONFIG.prompt_options(), CATALOG)
    for role in (router, planner, reflector):
        role.warm_up()
    no_file_reads()
    asyncio.run(_first_calls(router, planner, reflector))


def test_without_warm_up_the_first_call_reads_its_template(cold_registry, no_file_reads):
    # The check above would pass vacuously if nothing read a file on a first call.
    no_file_reads()
    with pytest.raises(AssertionError, match="warm_up should have loaded it"):
        asyncio.run(Router(_llm(), CATALOG, CONFIG.router_options()).route("t", "How many people live in Rome?"))


def test_the_executor_warms_its_three_templates(cold_registry):
    Executor([], _llm(), CONFIG.executor_options()).warm_up()
    loaded = {name for name, _ in prompts.registry._default()._cache}
    assert loaded >= {"executor", "executor_figures", "executor_repair"}


def test_warm_up_loads_the_tokenizer_the_renders_count_with(monkeypatch):
    loaded: list[str] = []
    monkeypatch.setattr(prompts.registry, "get_encoding", lambda name="o200k_base": loaded.append(name))
    Router(_llm(), CATALOG, CONFIG.router_options()).warm_up()
    assert loaded == ["o200k_base"]
