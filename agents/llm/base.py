"""The LLM protocol and its boundary types (fixed by DESIGN.md).

Every model backend — ``OpenAIChat``, ``FunctionLLM``, ``SimulatedLLM``, ``ReplayLLM`` — implements
``complete`` and ``stream``; the roles never know which one they talk to.

Example:
    >>> req = LLMRequest(role="planner", messages=[{"role": "user", "content": "plan this"}])
    >>> req.role
    'planner'
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agents.errors import TetrarchError

__all__ = [  # noqa: RUF022 - grouped by topic, not sorted
    "Role",
    "Usage",
    "Spend",
    "ToolCall",
    "ToolChoice",
    "LLMRequest",
    "LLMReply",
    "LLM",
    "LLMError",
    "LLMTimeoutError",
    "LLMRateLimitError",
    "LLMConnectionError",
    "LLMServerError",
    "LLMResponseError",
    "LLMScriptExhausted",
    "LLMStreamTruncated",
    "LLMReplayMismatch",
    "LLMToolCallError",
    "LLMToolsUnsupported",
]

Role = Literal["router", "planner", "executor", "reflector", "react"]


class Usage(BaseModel):
    """Cost of one or more LLM calls. Adds with ``+``."""

    model_config = ConfigDict(frozen=True)

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Spend:
    """What some LLM calls cost, with one record per call (``reply_record``: the event log, traces and
    ``ReplayLLM`` read them). Every role result, plan item and step outcome carries one; adds with ``+``.

    Example:
        >>> a = Spend(Usage(llm_calls=1, input_tokens=10, output_tokens=2), ({"role": "router"},))
        >>> (a + a).usage.llm_calls, len((a + a).calls)
        (2, 2)
    """

    usage: Usage = field(default_factory=Usage)
    calls: tuple[dict[str, Any], ...] = ()

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.usage + other.usage, self.calls + other.calls)

    def __bool__(self) -> bool:
        return bool(self.calls or self.usage.llm_calls or self.usage.total_tokens)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of a tool the model asked for (native function calling): the call id the tool's result message
    must carry back, the tool's name, and its arguments parsed from JSON.

    Example:
        >>> call = ToolCall("call_1", "lookup", {"city": "Rome"})
        >>> call.to_message()["function"]
        {'name': 'lookup', 'arguments': '{"city": "Rome"}'}
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_message(self) -> dict[str, Any]:
        """The call as an assistant message's ``tool_calls`` entry (the OpenAI wire form: arguments as JSON text)."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)}}


ToolChoice = Literal["auto", "none", "required"] | dict[str, Any]
"""``"auto"`` (the model decides), ``"none"``, ``"required"``, or ``{"type": "function", "function": {"name": ...}}``."""


class LLMRequest(BaseModel):
    """One chat completion request from a role."""

    model_config = ConfigDict(frozen=True)

    role: Role
    messages: list[dict[str, Any]]
    """OpenAI-style ``{"role": "system"|"user"|"assistant", "content": str}`` dicts."""
    response_format: Literal["text", "json"] = "text"
    json_schema: dict[str, Any] | None = None
    """JSON Schema of the expected object when ``response_format == "json"``; backends that can
    constrain decoding with it do, the others only ask for JSON."""
    grammar: str | None = None
    """A GBNF grammar for a ``"text"`` reply (``planning.grammar.terse_plan_grammar``); OpenAIChat sends it as
    llama.cpp's ``grammar`` field when its profile says ``grammar=True``, other backends ignore it."""
    tools: list[dict[str, Any]] | None = None
    """Tool specs for native function calling, OpenAI's form: ``{"type": "function", "function": {"name",
    "description", "parameters": <JSON Schema>}}``. The reply's ``tool_calls`` hold what the model called."""
    tool_choice: ToolChoice | None = None
    """Sent only with ``tools``; ``None`` leaves it to the server (``"auto"`` everywhere)."""
    parallel_tool_calls: bool | None = None
    """``False`` asks for at most one call per turn (OpenAI's field); ``None`` sends nothing (server default)."""
    stream: bool = False
    max_tokens: int | None = None
    temperature: float = 0.0
    metadata: dict[str, str] = Field(default_factory=dict)
    """Opaque tags (task_id, step_id, attempt) used for recording and replay; never sent to the model."""


class LLMReply(BaseModel):
    """What a backend returns for one request."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Field(default_factory=lambda: Usage(llm_calls=1))
    latency_s: float = 0.0
    model: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The tools the model called (native function calling), in its order; empty for a text answer."""

    def as_message(self) -> dict[str, Any]:
        """This reply as the assistant turn the next request repeats: ``content`` only when there is text or no call
        (OpenAI takes null content beside calls, llama-cpp-python's server only a string or none), then the calls.

        Example:
            >>> LLMReply(text="", tool_calls=[ToolCall("c1", "f", {})]).as_message()["tool_calls"][0]["id"]
            'c1'
        """
        turn: dict[str, Any] = {"role": "assistant"}
        if self.text or not self.tool_calls:
            turn["content"] = self.text
        if self.tool_calls:
            turn["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return turn


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``stream`` yields text deltas and finally exactly one ``LLMReply``."""

    async def complete(self, request: LLMRequest) -> LLMReply: ...

    def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]: ...


class LLMError(TetrarchError):
    """Base of every error a backend raises after its own retries are exhausted."""

    transient: bool = False


class LLMTimeoutError(LLMError):
    transient = True


class LLMRateLimitError(LLMError):
    transient = True


class LLMConnectionError(LLMError):
    transient = True


class LLMServerError(LLMError):
    transient = True


class LLMResponseError(LLMError):
    """The server answered, but not with something usable (4xx, empty or truncated body)."""


class LLMScriptExhausted(LLMError):
    """A scripted fake was asked for more replies than its script holds (a test bug, never papered over)."""


class LLMStreamTruncated(LLMResponseError):
    """A streamed reply ended without a finish_reason (the connection dropped mid-answer).

    Transient: the same request usually succeeds when sent again, so callers may retry it."""

    transient = True


class LLMReplayMismatch(LLMError):
    """``ReplayLLM`` was asked for a call that the recording does not hold (the code or prompts changed)."""


class LLMToolCallError(LLMResponseError):
    """The model's tool calls stayed unusable (arguments that are not a JSON object, a call without a name) after
    the one repair round that showed it the error."""


class LLMToolsUnsupported(LLMResponseError):
    """The server rejected a request carrying ``tools``: it has no native function calling (or not for this model).
    Use the JSON-in-text form (``ReActAgent(tool_calling="json")``, or ``"auto"`` to fall back by itself)."""
