"""Reading an ``OpenAIChat`` stream's SSE chunks: the text deltas, the tool calls' deltas joined by index, and, for a
reader that asks for them, each call's argument pieces as they arrive (``ToolArgumentsDelta``).

A reader asks by tagging the request's metadata (``STREAM_TOOL_ARGUMENTS``): only it knows what to do with pieces that
are not the reply's text (the typed reviewer streams its answer's JSON from them, ``agents.roles.output_tool``).
Without the tag a stream yields text deltas only, so its pieces add up to the reply's text, as the LLM protocol says.

Example:
    >>> state = StreamState(parts=[], tool_arguments=True)
    >>> chunk = {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f",
    ...          "arguments": '{"a"'}}]}}]}
    >>> [(piece, piece.name) for piece in state.feed(chunk)]
    [('{"a"', 'f')]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from agents.llm._tool_calls import StreamedCalls

__all__ = ["STREAM_TOOL_ARGUMENTS", "StreamState", "ToolArgumentsDelta", "field", "wants_tool_arguments"]


def field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]``; ``None`` when absent. The SDK builds models without validation, so a
    body of the wrong shape yields missing attributes or plain dicts instead of errors."""
    # Here, not beside the SDK helpers in ``_openai_support``: that module imports ``openai`` (70,000 objects
    # the cyclic GC walks on every full pass, and a second of import), and the reviewer's output tool imports
    # this one in every process, also those whose model is not an OpenAI client.
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


STREAM_TOOL_ARGUMENTS = "stream_tool_arguments"
"""``LLMRequest.metadata`` key: with the value ``"yes"``, ``OpenAIChat.stream`` also yields each tool call's argument
pieces as ``ToolArgumentsDelta`` (never sent to the model: metadata never is)."""


class ToolArgumentsDelta(str):
    """A piece of the JSON arguments of tool call ``index`` (named ``name``), as the server streamed it. A ``str``, so
    wrappers that count what a stream wrote (``MeteredLLM``, ``RecordingLLM``) count it: it is output the model
    wrote."""

    index: int
    name: str

    def __new__(cls, text: str, index: int, name: str) -> ToolArgumentsDelta:
        piece = super().__new__(cls, text)
        piece.index, piece.name = index, name
        return piece

    def __reduce__(self) -> tuple[Any, ...]:
        return ToolArgumentsDelta, (str(self), self.index, self.name)


def wants_tool_arguments(metadata: dict[str, str]) -> bool:
    return metadata.get(STREAM_TOOL_ARGUMENTS) == "yes"


@dataclass(slots=True)
class StreamState:
    parts: list[str]
    finished: bool = False
    usage: Any = None
    model: str = ""
    calls: StreamedCalls = dataclasses.field(default_factory=StreamedCalls)
    tool_arguments: bool = False
    """Yield the calls' argument pieces too (``STREAM_TOOL_ARGUMENTS``)."""

    def feed(self, chunk: Any) -> list[str]:
        """The deltas of one SSE chunk to yield (text, and argument pieces when asked for); notes tool-call deltas,
        finish_reason, usage and model."""
        self.model = field(chunk, "model") or self.model
        self.usage = field(chunk, "usage") or self.usage
        out: list[str] = []
        for choice in field(chunk, "choices") or []:
            delta = field(choice, "delta")
            content = field(delta, "content")
            if isinstance(content, str) and content:
                self.parts.append(content)
                out.append(content)
            tool_deltas = field(delta, "tool_calls")
            if tool_deltas:
                self.calls.feed(list(tool_deltas), field)
                if self.tool_arguments:
                    out += self._argument_pieces(list(tool_deltas))
            if field(choice, "finish_reason"):
                self.finished = True
        return out

    def _argument_pieces(self, deltas: list[Any]) -> list[str]:
        pieces: list[str] = []
        for position, delta in enumerate(deltas):
            index = field(delta, "index")
            index = index if isinstance(index, int) else position
            text = field(field(delta, "function"), "arguments")
            if isinstance(text, str) and text:
                pieces.append(ToolArgumentsDelta(text, index, self.calls.names.get(index, "")))
        return pieces
