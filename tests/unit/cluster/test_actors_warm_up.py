"""The role actors run their role's ``warm_up`` when they start (or restart), not in the first task's call."""

from __future__ import annotations

import pytest

from agents.cluster.actors import PlannerActor, ReflectorActor, RouterActor
from agents.config import RuntimeConfig
from agents.llm import SMALL_LOCAL, FunctionLLM
from agents.roles.planner import Planner
from agents.roles.reflector import Reflector
from agents.roles.router import Router

CONFIG = RuntimeConfig()
CATALOG = "- lookup(city: str) -> number: The population of a city."
SCHEMAS = {"lookup": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


@pytest.mark.parametrize("actor, role, args", [
    (RouterActor, Router, (CATALOG, CONFIG.router_options())),
    (PlannerActor, Planner, (SCHEMAS, CATALOG, CONFIG.planner_options())),
    (ReflectorActor, Reflector, (CONFIG.prompt_options(), CATALOG)),
])
def test_the_role_actors_warm_up_when_they_start(actor, role, args, monkeypatch):
    warmed: list[type] = []
    monkeypatch.setattr(role, "warm_up", lambda self: warmed.append(type(self)))
    # the class Ray instantiates in the actor's process
    actor(FunctionLLM(lambda request: "{}", profile=SMALL_LOCAL), *args)
    assert warmed == [actor]

