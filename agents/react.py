"""The ReAct baselines: one agent, the same LLM, tools and prompt machinery as tetrarch.

``ReActAgent(parallel=False)``: thought → one tool call → observation, until a final answer.
``ReActAgent(parallel=True)``: several tool calls per turn (OpenAI-style parallel function calling), run
concurrently. ``tool_calling`` says how the model calls tools:

- ``"native"`` (default): the way users run ReAct (LangGraph's ``create_react_agent``, the OpenAI Agents SDK):
  the tools' JSON Schemas go in the request's ``tools``, the model answers with ``tool_calls``, and each result
  goes back as a ``tool`` message carrying its call id. A reply without calls is the final answer.
- ``"json"``: the text form: the model writes each turn as a JSON object (``prompts/react``), results come back
  as a user message.
- ``"auto"``: native, and the JSON form from then on when the server rejects ``tools``.

Both return the same ``TaskResult`` records (usage by role "react", per-call timings), so benchmarks compare like
with like.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from agents.config import RuntimeConfig
from agents.engine.budget import Budget
from agents.errors import BudgetExceeded, CostBudgetExceeded, InvalidLLMOutputError
from agents.events import StoppedReason, TaskStatus
from agents.llm.base import (
    LLM,
    LLMError,
    LLMReply,
    LLMRequest,
    LLMToolCallError,
    LLMToolsUnsupported,
    Spend,
    Usage,
)
from agents.llm.base import ToolCall as ToolCallReply
from agents.results import StepResult, StepTiming, TaskResult, Timings, UsageReport
from agents.roles.cost_meter import MeteredLLM, metered
from agents.roles.json_call import call_json
from agents.roles.render import output_text
from agents.tools import Tool, ToolDispatcher, ToolRegistry, idempotency_key
from agents.tools.errors import ToolError
from agents.tools.mcp.listing import resolve_tools
from planning.parse import parse_model
from prompts import fence_untrusted, load_prompt

__all__ = ["ReActAgent", "ReActTurn", "ParallelReActTurn", "ToolCall", "ToolCalling"]

ToolCalling = Literal["native", "json", "auto"]
"""How the model calls tools: native function calling, the JSON-in-text form, or native falling back to JSON."""

_NOT_RUN = "Not run: call one tool per turn. Call it again in a later turn if you still need it."


class ToolCall(BaseModel):
    """One tool call of the JSON-in-text form (the native form's calls are ``agents.llm.ToolCall``)."""

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


class _UseJSON(Exception):
    """``tool_calling="auto"``: the server rejected ``tools`` on the first call; the run goes on in the JSON form."""


class ReActAgent:
    """Example:
        >>> agent = ReActAgent(llm, tools, RuntimeConfig(), parallel=True, tool_calling="native")  # doctest: +SKIP
        >>> result = await agent.run("Which is bigger, Paris or Rome?")                           # doctest: +SKIP
    """

    def __init__(self, llm: LLM, tools: Sequence[Tool | Any], config: RuntimeConfig | None = None, *,
                 parallel: bool = False, tool_calling: ToolCalling = "native", max_turns: int = 24,
                 clock: Callable[[], float] = time.time) -> None:
        if tool_calling not in get_args(ToolCalling):
            raise ValueError(f"tool_calling must be one of {get_args(ToolCalling)}, got {tool_calling!r}")
        self._llm = llm
        self._cfg = config or RuntimeConfig()
        self._budget = Budget.of(self._cfg)
        self._registry = ToolRegistry(resolve_tools(tools))  # Tool objects, functions and MCP servers alike
        retry = self._cfg.tools
        self._dispatcher = ToolDispatcher(
            self._registry, max_attempts=retry.max_attempts, backoff_s=retry.backoff_s,
            backoff_max_s=retry.backoff_max_s, max_output_tokens=retry.max_output_tokens)
        self.parallel = parallel
        self.tool_calling: ToolCalling = tool_calling
        self._native = tool_calling != "json"
        self._max_turns = max_turns
        self._clock = clock
        self._turn_model: type[BaseModel] = ParallelReActTurn if parallel else ReActTurn

    @property
    def mode(self) -> Literal["native", "json"]:
        """The form in use: ``"auto"`` reads ``"json"`` once the server has rejected native tool calls."""
        return "native" if self._native else "json"

    def prompt_name(self) -> str:
        """The prompt template the current form uses (``react``, ``react_parallel``, ``react_native``, …)."""
        base = "react_parallel" if self.parallel else "react"
        return f"{base}_native" if self._native else base

    def tool_specs(self) -> list[dict[str, Any]]:
        """The tools as the native form sends them (``LLMRequest.tools``): their JSON Schemas, MCP tools included."""
        return self._registry.function_specs()

    async def run(self, task: str, task_id: str | None = None) -> TaskResult:
        task_id = task_id or uuid.uuid4().hex[:16]
        # Every model call of the run is checked against max_cost_usd before it is sent (roles/cost_meter.py).
        run = _Run(task_id, self._clock(), metered(self._llm, self._budget.for_call(UsageReport())))
        try:
            await asyncio.wait_for(self._loop(task, run), timeout=self._cfg.task_timeout_s)
        except _Stop as stop:
            run.stop = stop
        except CostBudgetExceeded as exc:
            run.stop = _Stop("failed", "max_cost_usd", error=f"ReAct: {exc}")
        except asyncio.TimeoutError:
            run.stop = _Stop("failed", "task_timeout", error=f"ReAct did not finish within "
                                                            f"{self._cfg.task_timeout_s:g}s")
        return run.result(self._clock())

    async def _loop(self, task: str, run: _Run) -> None:
        if self._native:
            try:
                await self._native_loop(task, run)
            except _UseJSON:
                self._native = False
        await self._json_loop(task, run)

    # ------------------------------------------------------------------ native function calling
    async def _native_loop(self, task: str, run: _Run) -> None:
        name = self.prompt_name()
        prompt = load_prompt(name).render(
            budget_tokens=self._cfg.context_token_budget, task=task)
        messages = list(prompt.messages)
        specs = self.tool_specs()
        seen: dict[str, int] = {}
        for turn in range(self._max_turns):
            run.check_budget(self._budget, before_call=True)
            request = LLMRequest(role="react", messages=messages, tools=specs, tool_choice="auto",
                                 parallel_tool_calls=None if self.parallel else False,
                                 metadata={"task_id": run.task_id})
            reply = _without_repeats(await self._native_call(request, run, first=turn == 0))
            if not reply.tool_calls:
                if reply.text.strip():
                    raise _Stop("accepted", "accepted", answer=reply.text.strip())
                raise _Stop("failed", "invalid_llm_output", error="the model returned neither a tool call nor a "
                                                                   "final answer")
            calls = list(reply.tool_calls) if self.parallel else reply.tool_calls[:1]
            self._check_loop(seen, [(c.name, c.arguments) for c in calls])
            outputs = await asyncio.gather(*(self._call_tool(c.name, c.arguments, run) for c in calls))
            ran = {c.id: text for c, text in zip(calls, outputs)}
            messages = [*messages, reply.as_message(),
                        *({"role": "tool", "tool_call_id": c.id, "content": ran.get(c.id, _NOT_RUN)}
                          for c in reply.tool_calls)]
        raise _Stop("failed", "max_steps", error=f"no final answer after {self._max_turns} turns")

    async def _native_call(self, request: LLMRequest, run: _Run, *, first: bool) -> LLMReply:
        try:
            reply = await run.llm.complete(request)
        except LLMToolsUnsupported as exc:
            if self.tool_calling == "auto" and first:
                raise _UseJSON from exc
            raise _Stop("failed", "llm_unavailable", error=f"the model call failed: {exc}") from exc
        except LLMToolCallError as exc:
            raise _Stop("failed", "invalid_llm_output", error=str(exc)) from exc
        except LLMError as exc:
            raise _Stop("failed", "llm_unavailable", error=f"the model call failed: {exc}") from exc
        run.usage = run.usage + reply.usage
        run.check_budget(self._budget)
        return reply

    # ------------------------------------------------------------------ the JSON-in-text form
    async def _json_loop(self, task: str, run: _Run) -> None:
        name = self.prompt_name()
        prompt = load_prompt(name).render(
            budget_tokens=self._cfg.context_token_budget, task=task, tools=self._registry.catalog_text())
        messages = list(prompt.messages)
        schema = self._turn_model.model_json_schema()
        seen: dict[str, int] = {}
        for _ in range(self._max_turns):
            run.check_budget(self._budget, before_call=True)
            try:
                call = await call_json(run.llm, role="react", messages=messages,
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
            self._check_loop(seen, [(c.tool_name, c.tool_input) for c in calls])
            outputs = await asyncio.gather(*(self._call_tool(c.tool_name, dict(c.tool_input), run) for c in calls))
            observations = [f"Observation for {c.tool_name}({json.dumps(c.tool_input, ensure_ascii=False)}):\n{text}"
                            for c, text in zip(calls, outputs)]
            messages = [*messages, {"role": "assistant", "content": call.raw},
                        {"role": "user", "content": "\n\n".join(observations)}]
        raise _Stop("failed", "max_steps", error=f"no final answer after {self._max_turns} turns")

    # ------------------------------------------------------------------ shared
    def _check_loop(self, seen: dict[str, int], calls: list[tuple[str, dict[str, Any]]]) -> None:
        for tool_name, tool_input in calls:
            key = json.dumps([tool_name, tool_input], sort_keys=True, default=str)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > self._cfg.loop_window:
                raise _Stop("failed", "loop_detected", error=f"ReAct repeated {tool_name} with the same "
                                                              f"arguments {seen[key]} times")

    async def _call_tool(self, tool_name: str, tool_input: dict[str, Any], run: _Run) -> str:
        """Run one call and record it as a step; returns the result (or error) fenced as untrusted data."""
        step_id = len(run.steps) + 1
        run.steps.append(None)  # reserve the id; filled below
        started = self._clock()
        run.first_dispatch = run.first_dispatch or started
        try:
            result = await self._dispatcher.call(tool_name, dict(tool_input),
                                                 idempotency_key=idempotency_key(run.task_id, step_id, tool_name,
                                                                                 dict(tool_input)),
                                                 timeout_s=self._cfg.step_timeout_s)
            output, error, status = result.output, None, "completed"
            text = fence_untrusted(output_text(output), f"{tool_name} result")
        except ToolError as exc:
            output, error, status = None, str(exc), "failed"
            text = f"Error from {tool_name}: {fence_untrusted(str(exc), f'{tool_name} error')}"
        run.steps[step_id - 1] = StepResult(step_id=step_id, description=f"react call {step_id}",
                                            tool_name=tool_name, tool_input=dict(tool_input),
                                            status=status, output=output, error=error, attempts=1,
                                            started_at=started, finished_at=self._clock())
        return text


class _Run:
    def __init__(self, task_id: str, submitted_at: float, llm: LLM) -> None:
        self.llm = llm
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
        cost = self.llm.cost_usd if isinstance(self.llm, MeteredLLM) else None  # metered under a money cap
        return TaskResult(
            task_id=self.task_id, status=stop.status, stopped_reason=stop.reason, answer=stop.answer,
            error=stop.error, steps=steps, usage=UsageReport(
                total=self.usage, by_role={"react": self.usage}, cost_usd=cost,
                cost_by_role={} if cost is None else {"react": cost}),
            timings=Timings(wall_s=now - self.submitted_at, submitted_at=self.submitted_at, finished_at=now,
                            first_dispatch_s=None if self.first_dispatch is None else
                            self.first_dispatch - self.submitted_at,
                            steps={s.step_id: StepTiming(started_at=s.started_at, finished_at=s.finished_at)
                                   for s in steps}))


def _without_repeats(reply: LLMReply) -> LLMReply:
    """The reply with each distinct call once (the first of its id): a small model that falls into repeating one
    call writes it until its context is full (190 identical calls measured on a 0.5B model), and answering every
    copy would overflow the next request. One turn's identical calls ask for the same thing; running it once is
    what any of them meant."""
    distinct: dict[tuple[str, str], ToolCallReply] = {}
    for call in reply.tool_calls:
        distinct.setdefault((call.name, json.dumps(call.arguments, sort_keys=True, default=str)), call)
    if len(distinct) == len(reply.tool_calls):
        return reply
    return reply.model_copy(update={"tool_calls": list(distinct.values())})
