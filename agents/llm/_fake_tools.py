"""Tool-call answers of the fake OpenAI-compatible server: what a responder returns, and the wire forms (a whole
message, or stream deltas) OpenAI uses for them.

Example:
    >>> reply = FakeReply(None, [FakeToolCall("lookup", {"city": "Rome"})])
    >>> tool_message(reply)["tool_calls"][0]["function"]
    {'name': 'lookup', 'arguments': '{"city": "Rome"}'}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["FakeReply", "FakeToolCall", "stream_tool_chunks", "tool_message"]


@dataclass(frozen=True, slots=True)
class FakeToolCall:
    """One call in a fake answer; ``arguments`` as a dict, or as raw text (to send malformed JSON on purpose)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class FakeReply:
    """What a responder may return instead of plain text: content (may be ``None``) and tool calls."""

    content: str | None = ""
    tool_calls: list[FakeToolCall] = field(default_factory=list)

    def malformed(self) -> FakeReply:
        """The same reply with every call's arguments cut in half (no longer valid JSON)."""
        cut = [replace(c, arguments=c.arguments_text()[: max(1, len(c.arguments_text()) // 2)])
               for c in self.tool_calls]
        return replace(self, tool_calls=cut)

    def counted_text(self) -> str:
        """What the server's usage counts as output: the content and each call's name and arguments."""
        return " ".join([self.content or "", *(f"{c.name} {c.arguments_text()}" for c in self.tool_calls)])

    def call_id(self, index: int) -> str:
        return self.tool_calls[index].id or f"call_fake_{index}"


def tool_message(reply: FakeReply) -> dict[str, Any]:
    """The assistant message of a non-streamed answer."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [{"id": reply.call_id(i), "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments_text()}}
                                 for i, c in enumerate(reply.tool_calls)]
    return message


def stream_tool_chunks(reply: FakeReply, size: int) -> list[dict[str, Any]]:
    """The stream deltas of the reply's calls, as OpenAI sends them: per call one delta with its index, id and name,
    then its arguments in pieces of ``size`` characters, each tagged with the index only."""
    deltas: list[dict[str, Any]] = []
    for i, call in enumerate(reply.tool_calls):
        deltas.append({"tool_calls": [{"index": i, "id": reply.call_id(i), "type": "function",
                                       "function": {"name": call.name, "arguments": ""}}]})
        text = call.arguments_text()
        deltas += [{"tool_calls": [{"index": i, "function": {"arguments": text[j:j + size]}}]}
                   for j in range(0, len(text), size)]
    return deltas
