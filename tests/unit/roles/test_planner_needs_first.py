"""A planner template that says ``# needs: first`` gets a plan schema opening with the "needs" list; the list is
not part of the plan, and a template without the header gets the plain schema."""

from __future__ import annotations

import asyncio
import json

from support import wire
from support.local import plan_scripted, run_task
from support.tools import lookup

from agents.config import EMBEDDED_MODEL_PROMPTS, RuntimeConfig
from agents.llm import LLMRequest
from agents.tools.builtins.calculator import calculator
from prompts import load_prompt

TASK = "Combien d'habitants ont Rome et Paris ensemble ?"


def run(version: str) -> tuple[str, list[LLMRequest]]:
    seen: list[LLMRequest] = []
    steps = json.loads(wire.plan(wire.step(1, "lookup", {"city": "Rome"}),
                                 wire.step(2, "lookup", {"city": "Paris"}),
                                 wire.step(3, "calculator", {"expression": "{$step_1_result} + {$step_2_result}"},
                                           deps=[1, 2])))["steps"]

    def planner(request: LLMRequest) -> str:
        seen.append(request)
        return json.dumps({"needs": ["population of Rome: lookup",
                                     "population of Paris: lookup"], "steps": steps})

    config = RuntimeConfig(prompt_versions={"planner": version})
    result = asyncio.run(run_task(plan_scripted(planner, answer="5,000,000"), TASK,
                                  tools=[lookup, calculator], config=config))[0]
    assert [s.tool_name for s in result.steps] == ["lookup", "lookup", "calculator"]
    return result.status, seen


def test_a_planner_that_lists_its_needs_first_gets_them_in_its_schema_and_the_plan_is_its_steps() -> None:
    assert load_prompt("planner", "v11").needs_first
    status, seen = run("v11")
    assert status == "accepted" and len(seen) == 1
    schema = seen[0].json_schema or {}
    assert list(schema["properties"]) == ["needs", "steps"] and "needs" in schema["required"]


def test_a_template_without_the_header_gets_the_plain_plan_schema() -> None:
    version = EMBEDDED_MODEL_PROMPTS["planner"]  # measured end to end, the embedded default lists no needs
    assert not load_prompt("planner", version).needs_first
    status, seen = run(version)
    assert status == "accepted" and "needs" not in (seen[0].json_schema or {})["properties"]
