"""Chat models behind one protocol: ``await llm.complete(LLMRequest(...)) -> LLMReply`` (+ ``llm.stream``).

- ``OpenAIChat`` — any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama).
- ``FunctionLLM`` / ``ScriptedLLM`` — replies from Python, for tests and checks (no network).
- ``RecordingLLM`` / ``ReplayLLM`` — record every call as an ``LLMCallRecord``; answer from records.

Native function calling: ``LLMRequest(..., tools=[{"type": "function", "function": {...}}], tool_choice="auto")``;
the reply's ``tool_calls`` are ``ToolCall(id, name, arguments)`` (docs/function-calling.md).

``OpenAIChat`` is imported on first use: the ``openai`` SDK takes about a second to import, and Ray
workers that only need a fake should not pay for it.

Example:
    >>> from agents.llm import FunctionLLM, LLMRequest
    >>> llm = FunctionLLM(lambda request: "4")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.llm.base import (
    LLM,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMReplayMismatch,
    LLMReply,
    LLMRequest,
    LLMResponseError,
    LLMScriptExhausted,
    LLMServerError,
    LLMStreamTruncated,
    LLMTimeoutError,
    LLMToolCallError,
    LLMToolsUnsupported,
    Role,
    ToolCall,
    Usage,
)
from agents.llm.function_llm import FunctionLLM
from agents.llm.profile import HOSTED, SMALL_LOCAL, ModelProfile, Strategy, profile_of
from agents.llm.records import LLMCallRecord, RecordingLLM
from agents.llm.replay import ReplayLLM
from agents.llm.scripted import ScriptedLLM

if TYPE_CHECKING:
    from agents.llm.openai_chat import OpenAIChat

__all__ = [  # noqa: RUF022 - grouped by topic, not sorted
    # protocol and boundary types
    "LLM",
    "LLMRequest",
    "LLMReply",
    "Usage",
    "Role",
    "ToolCall",
    # what differs by model
    "ModelProfile",
    "Strategy",
    "HOSTED",
    "SMALL_LOCAL",
    "profile_of",
    # backends
    "OpenAIChat",
    "FunctionLLM",
    "ScriptedLLM",
    "RecordingLLM",
    "ReplayLLM",
    "LLMCallRecord",
    "SimulatedLLM",
    "LatencyModel",
    "GoldTask",
    # errors
    "LLMError",
    "LLMTimeoutError",
    "LLMRateLimitError",
    "LLMConnectionError",
    "LLMServerError",
    "LLMResponseError",
    "LLMStreamTruncated",
    "LLMScriptExhausted",
    "LLMReplayMismatch",
    "LLMToolCallError",
    "LLMToolsUnsupported",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIChat":
        from agents.llm.openai_chat import OpenAIChat

        return OpenAIChat
    if name in ("SimulatedLLM", "LatencyModel", "GoldTask"):
        # imports prompts (tiktoken): only the benchmarks need it
        from agents.llm import simulated

        return getattr(simulated, name)
    raise AttributeError(f"module 'agents.llm' has no attribute {name!r}")
