"""A step whose tool refused its arguments, and whose repair waits on a busy model past the step's timeout, fails
with the tool's own error as an argument error, not as a timeout of a tool that answered at once (no Ray)."""

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

TIMEOUT_S = 0.3


@tool
def sql(query: str) -> str:
    """Run a read-only SQL query on the sales table (columns: country, units)."""
    if "quarter" in query:
        raise ToolArgumentError("SQL error: no such column: quarter")
    return "[[42]]"


def _run(model_delay_s: float, query: str = "SELECT units FROM sales WHERE quarter = 'Q3'"):
    async def busy_model(request: LLMRequest) -> str:
        await asyncio.sleep(model_delay_s)  # queued behind another role's long reply
        return '{"query": "SELECT units FROM sales WHERE country = \'DE\'"}'

    executor = Executor([sql], FunctionLLM(busy_model), RuntimeConfig().executor_options())
    step = PlanStep(step_id=4, description="units sold", tool_name="sql", tool_input={"query": query})
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=TIMEOUT_S)
    return asyncio.run(executor.run(request, {}))


def test_a_repair_the_model_did_not_answer_in_time_fails_with_the_tools_error():
    outcome = _run(model_delay_s=5.0)
    assert not outcome.ok and outcome.error_kind == "argument"
    assert "no such column: quarter" in outcome.error and "not repaired" in outcome.error
    assert "step_timeout_s=0.3s" in outcome.error


def test_a_repair_answered_in_time_still_runs_the_repaired_call():
    outcome = _run(model_delay_s=0.0)
    assert outcome.ok and outcome.output == "[[42]]"


def test_a_step_slow_for_its_own_sake_is_still_a_timeout():
    @tool
    async def slow_lookup(city: str) -> str:
        """Look a city up, slowly."""
        await asyncio.sleep(5)
        return city

    executor = Executor([slow_lookup], FunctionLLM(lambda request: "{}"), RuntimeConfig().executor_options())
    step = PlanStep(step_id=1, description="look up", tool_name="slow_lookup", tool_input={"city": "Rome"})
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=TIMEOUT_S)
    outcome = asyncio.run(executor.run(request, {}))
    assert not outcome.ok and outcome.error_kind == "timeout" and "did not finish" in outcome.error
