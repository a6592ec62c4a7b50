"""A tool that names the right value (``ToolArgumentError(fix=...)``) is retried with it by the executor at
once for a read tool — no model call, no replan — and never for a write tool (no Ray)."""

from __future__ import annotations

import asyncio

from agents import tool
from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.llm.base import LLMRequest
from agents.roles.executor import Executor
from agents.roles.messages import StepRequest
from agents.tools.errors import ToolArgumentError
from planning.models import PlanStep

CALLS: list[tuple[str, str]] = []


@tool
def population(entity: str) -> float:
    """Population of a place, in millions."""
    CALLS.append(("population", entity))
    if entity != "Dalwynbre":
        raise ToolArgumentError(f"unknown entity {entity!r}; did you mean 'Dalwynbre'?", fix={"entity": "Dalwynbre"})
    return 3.96


@tool(permission="write")
def rename(entity: str) -> str:
    """Rename a record."""
    CALLS.append(("rename", entity))
    if entity != "Dalwynbre":
        raise ToolArgumentError(f"unknown entity {entity!r}", fix={"entity": "Dalwynbre"})
    return "renamed"


def _run(tool_name: str, model_args: str = '{"entity": "Dalwynbre"}'):
    asked: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        asked.append(request)
        return model_args

    CALLS.clear()
    executor = Executor([population, rename], FunctionLLM(model), RuntimeConfig().executor_options())
    step = PlanStep(step_id=1, description="x", tool_name=tool_name, tool_input={"entity": "Dalwynbrx"})
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=5)
    return asyncio.run(executor.run(request, {})), asked


def test_a_read_tool_is_retried_with_its_own_fix_without_a_model_call():
    outcome, asked = _run("population")
    assert outcome.ok and outcome.output == 3.96
    assert outcome.arguments == {"entity": "Dalwynbre"}  # the call that ran is on record
    assert CALLS == [("population", "Dalwynbrx"), ("population", "Dalwynbre")]
    assert asked == [] and outcome.spend.usage.llm_calls == 0


def test_a_write_tool_is_never_rewritten_by_a_fix_only_by_the_repair_round():
    outcome, asked = _run("rename")
    assert outcome.ok and [r.role for r in asked] == ["executor"]
    assert CALLS == [("rename", "Dalwynbrx"), ("rename", "Dalwynbre")]
