"""The ReAct baselines: one agent, the same LLM, tools and prompt machinery as tetrarch.

``ReActAgent(parallel=False)``: thought → one tool call → observation, until a final answer.
``ReActAgent(parallel=True)``: several tool calls per turn (as OpenAI-style parallel function calling
allows), run concurrently. Both return the same ``TaskResult`` records (usage by role "react", per-call
timings), so benchmarks compare like with like.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.config import RuntimeConfig
from agents.engine.budget import Budget
from agents.errors import BudgetExceeded, InvalidLLMOutputError
from agents.events import StoppedReason, TaskStatus
from agents.llm.base import LLM, LLMError, Spend, Usage
from agents.results import StepResult, StepTiming, TaskResult, Timings, UsageReport
from agents.roles.json_call import call_json
from agents.roles.render import output_text
from agents.tools import Tool, ToolDispatcher, ToolRegistry, idempotency_key
from agents.tools.errors import ToolError
from planning.parse import parse_model
from prompts import fence_untrusted, load_prompt

__all__ = ["ReActAgent", "ReActTurn", "ParallelReActTurn", "ToolCall"]


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    tool_name: str
    tool_input: dict[str, Any] = Field(default_factory=dict)


class ReActTurn(BaseModel):
    """One ReAct turn (wire format of prompts/react)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    thought: str = ""
    action: ToolCall | None = None
    final_answer: str | None = None


class ParallelReActTurn(BaseModel):
    """One turn of ReAct with parallel tool calls (prompts/react_parallel)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    thought: str = ""
    actions: list[ToolCall] = Field(default_factory=list)
    final_answer: str | None = None


class _Stop(Exception):
    def __init__(self, status: TaskStatus, reason: StoppedReason, *, answer: str | None = None,
                 error: str | None = None) -> None:
        super().__init__(error or reason)
        self.status, self.reason, self.answer, self.error = status, reason, answer, error


class ReActAgent:
    """Example:
        >>> agent = ReActAgent(llm, tools, RuntimeConfig(), parallel=True)   # doctest: +SKIP
        >>> result = await agent.run("Which is bigger, Paris or Rome?")       # doctest: +SKIP
    """

    def __init__(self, llm: LLM, tools: Sequence[Tool], config: RuntimeConfig | None = None, *,
                 parallel: bool = False, max_turns: int = 24, clock: Callable[[], float] = time.time) -> None:
        self._llm = llm
        self._cfg = config or RuntimeConfig()
        self._budget = Budget(self._cfg.token_budget, self._cfg.max_llm_calls)
        self._registry = ToolRegistry(tools)
        self._dispatcher = ToolDispatcher(
            self._registry, max_attempts=self._cfg.tool_max_attempts, backoff_s=self._cfg.tool_backoff_s,
            backoff_max_s=self._cfg.tool_backoff_max_s, max_output_tokens=self._cfg.max_tool_output_tokens)
        self.parallel = parallel
        self._max_turns = max_turns
        self._clock = clock
        self._turn_model: type[BaseModel] = ParallelReActTurn if parallel else ReActTurn

    async def run(self, task: str, task_id: str | None = None) -> TaskResult:
        task_id = task_id or uuid.uuid4().hex[:16]
        run = _Run(task_id, self._clock())
        try:
            await asyncio.wait_for(self._loop(task, run), timeout=self._cfg.task_timeout_s)
        except _Stop as stop:
            run.stop = stop
        except asyncio.TimeoutError:
            run.stop = _Stop("failed", "task_timeout", error=f"ReAct did not finish within "
                                                            f"{self._cfg.task_timeout_s:g}s")
        return run.result(self._clock())

    async def _loop(self, task: str, run: _Run) -> None:
        name = "react_parallel" if self.parallel else "react"
        prompt = load_prompt(name, self._cfg.prompt_versions.get(name)).render(
            budget_tokens=self._cfg.context_token_budget, task=task, tools=self._registry.catalog_text())
        messages = list(prompt.messages)
        schema = self._turn_model.model_json_schema()
        seen: dict[str, int] = {}
        for _ in range(self._max_turns):
            run.check_budget(self._budget, before_call=True)
            try:
                call = await call_json(self._llm, role="react", messages=messages,
                                       parse=lambda text: parse_model(text, self._turn_model), json_schema=schema,
                                       metadata={"task_id": run.task_id})
            except InvalidLLMOutputError as exc:
                run.usage = run.usage + (exc.spend or Spend()).usage
                raise _Stop("failed", "invalid_llm_output", error=str(exc)) from exc
            except LLMError as exc:
                raise _Stop("failed", "llm_unavailable", error=f"the model call failed: {exc}") from exc
            run.usage = run.usage + call.spend.usage
            run.check_budget(self._budget)
            turn = call.value
            calls = list(turn.actions) if self.parallel else ([turn.action] if turn.action else [])  # type: ignore[attr-defined]
            if turn.final_answer is not None and not calls:  # type: ignore[attr-defined]
                raise _Stop("accepted", "accepted", answer=turn.final_answer)  # type: ignore[attr-defined]
            if not calls:
                raise _Stop("failed", "invalid_llm_output", error="the model returned neither a tool call nor a "
                                                                   "final answer")
            for c in calls:
                key = json.dumps([c.tool_name, c.tool_input], sort_keys=True, default=str)
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > self._cfg.loop_window:
                    raise _Stop("failed", "loop_detected", error=f"ReAct repeated {c.tool_name} with the same "
                                                                  f"arguments {seen[key]} times")
            observations = await asyncio.gather(*(self._call_tool(c, run) for c in calls))
            messages = [*messages, {"role": "assistant", "content": call.raw},
                        {"role": "user", "content": "\n\n".join(observations)}]
        raise _Stop("failed", "max_steps", error=f"no final answer after {self._max_turns} turns")

    async def _call_tool(self, call: ToolCall, run: _Run) -> str:
        step_id = len(run.steps) + 1
        run.steps.append(None)  # reserve the id; filled below
        started = self._clock()
        run.first_dispatch = run.first_dispatch or started
        try:
            result = await self._dispatcher.call(call.tool_name, dict(call.tool_input),
                                                 idempotency_key=idempotency_key(run.task_id, step_id, call.tool_name,
                                                                                 dict(call.tool_input)),
                                                 timeout_s=self._cfg.step_timeout_s)
            output, error, status = result.output, None, "completed"
            text = fence_untrusted(output_text(output), f"{call.tool_name} result")
        except ToolError as exc:
            output, error, status = None, str(exc), "failed"
            text = f"Error from {call.tool_name}: {fence_untrusted(str(exc), f'{call.tool_name} error')}"
        run.steps[step_id - 1] = StepResult(step_id=step_id, description=f"react call {step_id}",
                                            tool_name=call.tool_name, tool_input=dict(call.tool_input),
                                            status=status, output=output, error=error, attempts=1,
                                            started_at=started, finished_at=self._clock())
        return f"Observation for {call.tool_name}({json.dumps(call.tool_input, ensure_ascii=False)}):\n{text}"


class _Run:
    def __init__(self, task_id: str, submitted_at: float) -> None:
        self.task_id = task_id
        self.submitted_at = submitted_at
        self.usage = Usage()
        self.steps: list[StepResult | None] = []
        self.first_dispatch: float | None = None
        self.stop: _Stop | None = None

    def check_budget(self, budget: Budget, *, before_call: bool = False) -> None:
        try:
            budget.check(self.usage, before_call=before_call)
        except BudgetExceeded as exc:
            raise _Stop("failed", exc.cap, error=f"ReAct: {exc}") from exc

    def result(self, now: float) -> TaskResult:
        stop = self.stop or _Stop("failed", "internal_error", error="ReAct stopped without a result")
        steps = [s for s in self.steps if s is not None]
        return TaskResult(
            task_id=self.task_id, status=stop.status, stopped_reason=stop.reason, answer=stop.answer,
            error=stop.error, steps=steps, usage=UsageReport(total=self.usage, by_role={"react": self.usage}),
            timings=Timings(wall_s=now - self.submitted_at, submitted_at=self.submitted_at, finished_at=now,
                            first_dispatch_s=None if self.first_dispatch is None else
                            self.first_dispatch - self.submitted_at,
                            steps={s.step_id: StepTiming(started_at=s.started_at, finished_at=s.finished_at)
                                   for s in steps}))
