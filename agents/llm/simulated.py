"""SimulatedLLM: plays each benchmark task's gold behaviour for every role, with a latency model.

Benchmarks measure the *system* (scheduling, parallelism, prompt sizes, call counts), not a model. The
simulated model answers what a correct model would answer, after the time a real serving stack would
take: ``ttft_s + input_tokens / prefill_tokens_per_s + output_tokens / decode_tokens_per_s``. Its token
counts are the real prompts each system assembles, counted with tiktoken — so token comparisons are real.

Example:
    >>> gold = GoldTask(task="Add 1 and 2", plan=[{"step_id": 1, "description": "add", "tool_name": "calculator",
    ...     "tool_input": {"expression": "1+2"}, "depends_on": []}], answer="3",
    ...     react_turns=[[{"tool_name": "calculator", "tool_input": {"expression": "1+2"}}]])
    >>> llm = SimulatedLLM([gold], latency=LatencyModel(ttft_s=0, decode_tokens_per_s=1e9, prefill_tokens_per_s=1e9))
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from agents.llm.profile import HOSTED, ModelProfile
from agents.llm._tool_calls import request_tokens, tool_calls_text
from agents.llm.base import LLMReply, LLMRequest, LLMResponseError, ToolCall, Usage
from planning.delta import as_delta
from planning.models import Plan, Reflection, RouterDecision
from planning.terse import parse_terse, render_terse
from planning.terse_line import describe_call
from planning.terse_reflection import render_terse_reflection
from planning.terse_route import render_terse_route
from prompts import count_tokens, get_encoding

__all__ = ["LatencyModel", "GoldTask", "SimulatedLLM", "DEFAULT_LATENCY"]

# What planner/v14 and reflector/v11 say when they ask for the terse forms (the simulated model answers in the
# form its prompt asks for, so a benchmark measures the prompt version actually in use).
_TERSE_PLAN_MARK = "Write one step per line and nothing else:\nN. tool("
_POSITIONAL_MARK = "in the order of the tool's parameters"
_CATALOG_LINE = re.compile(r"^- (\w+)\(([^)]*)\)", re.MULTILINE)
_TERSE_VERDICT_MARK = "accept C R F"
_ANSWER_LINE_MARK = 'end with one line "answer: <the answer>"'
_DRAFT_SHOWN_MARK = "The plan's answer, filled in from the results:"
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_TERSE_ROUTE_MARK = "Reply with one line: the route, your confidence"
_TERSE_NOTE_MARK = '"# note" at the end of a line'
_DELTA = re.compile(r"The previous plan:\n(?P<plan>.*?)\n\nIts results:.*?"
                    r"(?:The outputs of steps (?P<kept>[$\d, ]+) are kept.*?)?numbered from (?P<start>\d+)", re.DOTALL)


def _asks(request: LLMRequest, mark: str) -> bool:
    return any(m.get("role") == "system" and mark in str(m.get("content", "")) for m in request.messages)


@dataclass(frozen=True, slots=True)
class LatencyModel:
    """Time one call takes on a serving stack.

    Defaults: a small hosted model of the GPT-4o-mini class as commonly measured in 2024-2025 public
    benchmarks (Artificial Analysis' provider pages report ≈ 0.3-0.5 s to first token and ≈ 70-100 output
    tokens/s); prefill throughput of a vLLM-served 7-8B model on one A100 is several thousand tokens/s.
    Every value is a flag of ``tetrarch bench``; the report prints the model used.
    """

    ttft_s: float = 0.35
    decode_tokens_per_s: float = 80.0
    prefill_tokens_per_s: float = 5000.0

    def seconds(self, input_tokens: int, output_tokens: int) -> float:
        return (self.ttft_s + input_tokens / self.prefill_tokens_per_s
                + output_tokens / self.decode_tokens_per_s)

    def describe(self) -> str:
        return (f"ttft {self.ttft_s:g}s + input/{self.prefill_tokens_per_s:g} tok/s + "
                f"output/{self.decode_tokens_per_s:g} tok/s")


DEFAULT_LATENCY = LatencyModel()


class GoldTask(BaseModel):
    """What a correct model does on one task."""

    task: str
    plan: list[dict[str, Any]]
    """The gold plan (wire format steps)."""
    first_plan: list[dict[str, Any]] | None = None
    """A first plan that fails and must be repaired (the repair suite); the replan returns ``plan``."""
    replan_feedback: str = "A step failed; fix its input and plan again."
    answer: str
    answer_number: float | None = None
    """The figure the answer states, where it states one (the suites' right answer, as a number)."""
    react_turns: list[list[dict[str, Any]]] = Field(default_factory=list)
    """The gold ReAct trajectory: each turn's tool calls, with concrete arguments."""
    reasoning_outputs: dict[int, str] = Field(default_factory=dict)


def _answer_shape(gold: GoldTask, plan: Plan) -> str | None:
    """The answer's shape a correct planner writes when its last step computes the figure the answer states: the
    answer with that figure replaced by the step's reference. None where the answer is not such a sentence."""
    last = plan.steps[-1] if plan.steps else None
    figure = _gold_figure(gold)
    if last is None or last.tool_name != "calculator" or figure is None:
        return None
    return f"{gold.answer[:figure.start()]}{{$step_{last.step_id}_result}}{gold.answer[figure.end():]}"


def _gold_figure(gold: GoldTask) -> re.Match[str] | None:
    """Where the gold answer writes its figure: ``answer_number`` as written, rounded to the decimals shown."""
    if gold.answer_number is None:
        return None
    return next((m for m in _NUMBER.finditer(gold.answer) if _rounds_to(gold.answer_number, m.group(0))), None)


def _rounds_to(value: float, written: str) -> bool:
    """Whether ``written`` is ``value`` rounded to the decimals it shows ("60.12" writes 60.1246)."""
    text = written.replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text else 0
    try:
        return abs(float(text) - round(value, decimals)) <= 10 ** -(decimals + 3) + 1e-9 * abs(value)
    except ValueError:
        return False


def _states(gold: GoldTask, prompt: str) -> bool:
    """Whether the plan's answer shown in a review prompt states the gold figure, to the decimals the gold answer
    writes it with (then a correct reviewer confirms it)."""
    figure = _gold_figure(gold)
    if figure is None:
        return False
    shown = prompt.split(_DRAFT_SHOWN_MARK, 1)[1]
    return any(_rounds_to(float(m.group(0).replace(",", "")), figure.group(0)) for m in _NUMBER.finditer(shown))


def _param_order(prompt: str) -> dict[str, list[str]]:
    """Each tool's parameters in order, read from the tool catalog in the prompt (``- name(a: str, b: int): …``)."""
    return {m.group(1): [p.split(":")[0].strip() for p in m.group(2).split(",") if p.strip()]
            for m in _CATALOG_LINE.finditer(prompt)}


class SimulatedLLM:
    """Answers every role from the gold task found in the prompt; raises if the prompt holds no known task."""

    def __init__(self, tasks: Sequence[GoldTask], latency: LatencyModel = DEFAULT_LATENCY, *,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, encoding: str = "o200k_base",
                 model: str = "simulated", profile: ModelProfile = HOSTED,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._tasks = {t.task: t for t in tasks}
        self.profile = profile
        self.latency = latency
        self._sleep = sleep
        self._clock = clock
        self._encoding = encoding
        self.model = model

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_sleep"] = None if state["_sleep"] is asyncio.sleep else state["_sleep"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._sleep is None:
            self._sleep = asyncio.sleep
        self.__dict__.setdefault("_clock", time.monotonic)

    # ------------------------------------------------------------------ answers
    def _gold(self, request: LLMRequest) -> GoldTask:
        text = "\n".join(str(m.get("content", "")) for m in request.messages)
        for task, gold in self._tasks.items():
            if task in text:
                return gold
        raise LLMResponseError("SimulatedLLM: the prompt contains no task of the loaded suite")

    def answer(self, request: LLMRequest) -> str:
        gold = self._gold(request)
        match request.role:
            case "router":
                decision = RouterDecision(route="plan", confidence=0.95, reason="needs tools")
                if _asks(request, _TERSE_ROUTE_MARK):
                    return render_terse_route(decision)
                return json.dumps(decision.model_dump())
            case "planner":
                return self._plan(gold, request)
            case "reflector":
                return self._reflect(gold, request)
            case "executor":
                step = request.metadata.get("step_id", "0")
                return gold.reasoning_outputs.get(int(step), "ok")
            case "react":
                return self._react_turn(gold, request)
        raise LLMResponseError(f"SimulatedLLM has no behaviour for role {request.role!r}")

    def _plan(self, gold: GoldTask, request: LLMRequest) -> str:
        # agents.roles.replan starts every replan context with one of these sentences.
        text = "\n".join(str(m.get("content", "")) for m in request.messages)
        replanning = "Your previous plan:" in text or "The previous plan:" in text
        plan = Plan.model_validate({"steps": gold.plan if replanning or gold.first_plan is None else gold.first_plan})
        if not _asks(request, _TERSE_PLAN_MARK):
            return json.dumps({"steps": [s.model_dump() for s in plan.steps]})
        if not _asks(request, _TERSE_NOTE_MARK):
            # The prompt does not offer step notes (planner/v3): the model writes the calls alone, and the
            # parser describes each step from its call.
            plan = Plan(steps=[s if s.tool_name is None else
                               s.model_copy(update={"description": describe_call(s.tool_name, s.tool_input)})
                               for s in plan.steps])
        # Answer in the form the prompt asked for, as a real model would (planner/v14: terse; a replan is a
        # delta over the kept steps, numbered where the prompt says).
        params = _param_order(text) if _asks(request, _POSITIONAL_MARK) else None
        delta = _DELTA.search(text)
        if replanning and delta is not None:
            previous = parse_terse(delta.group("plan"), _param_order(text))
            kept_ids = {int(i) for i in re.findall(r"\$(\d+)", delta.group("kept") or "")}
            kept = [s for s in previous.steps if s.step_id in kept_ids]
            plan = Plan(steps=as_delta(kept, plan, start=int(delta.group("start"))))
        if _asks(request, _ANSWER_LINE_MARK):
            plan = plan.model_copy(update={"answer": _answer_shape(gold, plan)})
        return render_terse(plan, params)

    def _reflect(self, gold: GoldTask, request: LLMRequest) -> str:
        # A failed step reads "— failed" (agents.roles.render) or "#N tool failed:" (prompts.compact).
        results = "\n".join(str(m.get("content", "")) for m in request.messages)
        failed = "— failed" in results or re.search(r"^#\d+ \S+ failed", results, re.MULTILINE) is not None
        if gold.first_plan is not None and failed:
            reflection = {"scores": {"completeness": 2, "correctness": 2, "format": 4}, "overall_pass": False,
                          "action": "replan", "retry_details": None, "feedback": gold.replan_feedback,
                          "answer": None}
        else:
            reflection = {"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                          "action": "accept", "retry_details": None, "feedback": "", "answer": gold.answer}
        if reflection["action"] == "accept" and _DRAFT_SHOWN_MARK in results and _states(gold, results):
            reflection["answer"] = None  # the plan's answer, filled by code, is right: the verdict confirms
        if _asks(request, _TERSE_VERDICT_MARK):
            return render_terse_reflection(Reflection.model_validate(reflection))
        return json.dumps(reflection)

    def _react_turn(self, gold: GoldTask, request: LLMRequest) -> str:
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        parallel = "actions" in (request.json_schema or {}).get("properties", {})
        turns = gold.react_turns if parallel else [[a] for t in gold.react_turns for a in t]
        if turn >= len(turns):
            return json.dumps({"thought": "I have everything I need.", "action": None, "actions": [],
                               "final_answer": gold.answer})
        calls = turns[turn]
        if parallel:
            return json.dumps({"thought": "Call the tools I need now.", "actions": calls, "final_answer": None})
        return json.dumps({"thought": "Call the next tool.", "action": calls[0], "final_answer": None})

    def _native_react_turn(self, gold: GoldTask, request: LLMRequest) -> tuple[str, list[ToolCall]]:
        """ReAct with native function calling: the next turn's calls as ``tool_calls`` (all of the gold turn's
        when the request allows parallel calls, else one), or the final answer as text."""
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        parallel = request.parallel_tool_calls is not False
        turns = gold.react_turns if parallel else [[a] for t in gold.react_turns for a in t]
        if turn >= len(turns):
            return gold.answer, []
        return "", [ToolCall(f"call_{turn}_{i}", c["tool_name"], dict(c.get("tool_input") or {}))
                    for i, c in enumerate(turns[turn])]

    def _reply_parts(self, request: LLMRequest) -> tuple[str, list[ToolCall]]:
        if request.role == "react" and request.tools:
            return self._native_react_turn(self._gold(request), request)
        return self.answer(request), []

    # ------------------------------------------------------------------ LLM protocol
    def _usage(self, request: LLMRequest, text: str, calls: Sequence[ToolCall] = ()) -> Usage:
        # Tool specs are input of every call, the calls the model writes its output (as a server bills them).
        written = text + (tool_calls_text(list(calls)) if calls else "")
        return Usage(llm_calls=1, input_tokens=request_tokens(request, self._encoding),
                     output_tokens=count_tokens(written, self._encoding))

    async def complete(self, request: LLMRequest) -> LLMReply:
        start = self._clock()
        text, calls = self._reply_parts(request)
        usage = self._usage(request, text, calls)
        await self._sleep(self.latency.seconds(usage.input_tokens, usage.output_tokens))
        return LLMReply(text=text, usage=usage, latency_s=self._clock() - start, model=self.model,
                        tool_calls=calls)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """One chunk a token, paced like a real decoder: the first after ttft + prefill, then one every
        1 / decode rate. A step line (or JSON object) is therefore dispatched when its last token is out, not
        when a 16-token chunk happens to end after it.

        Each token is due at a time fixed from the call's start (``start + ttft + prefill + k / rate``), not one
        sleep after the previous one: a sleep overshoots by a timer tick (~1.7 ms measured on the 2-core machine),
        which per token made an 80-token reply ~14% slower than the latency model, and slower than the same reply
        through ``complete`` (one sleep), which the ReAct baselines use."""
        start = self._clock()
        text, calls = self._reply_parts(request)
        usage = self._usage(request, text, calls)
        first = self.latency.ttft_s + usage.input_tokens / self.latency.prefill_tokens_per_s
        per_token = 1.0 / self.latency.decode_tokens_per_s
        await self._sleep_until(start + first)
        for k, piece in enumerate(self._tokens(text), start=1):
            await self._sleep_until(start + first + k * per_token)
            yield piece
        # The calls' tokens are decoded too, though a stream carries them as tool-call deltas.
        await self._sleep_until(start + self.latency.seconds(usage.input_tokens, usage.output_tokens))
        yield LLMReply(text=text, usage=usage, latency_s=self._clock() - start, model=self.model,
                       tool_calls=calls)

    async def _sleep_until(self, due: float) -> None:
        left = due - self._clock()
        if left > 0:
            await self._sleep(left)

    def _tokens(self, text: str) -> list[str]:
        """The text cut at its tiktoken token boundaries (a multi-byte character split across tokens stays in
        the later piece, so every piece is valid text and the pieces join back to ``text``)."""
        enc = get_encoding(self._encoding)
        pieces: list[str] = []
        pending = b""
        for token in enc.encode(text):
            pending += enc.decode_single_token_bytes(token)
            try:
                pieces.append(pending.decode("utf-8"))
                pending = b""
            except UnicodeDecodeError:
                continue
        if pending:
            pieces.append(pending.decode("utf-8", errors="replace"))
        return pieces
