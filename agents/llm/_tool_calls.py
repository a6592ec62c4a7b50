"""Pure helpers of native function calling: reading tool calls from replies (whole, streamed, or written as
``<tool_call>`` blocks in the text), the one repair round for malformed arguments, and what tools cost in tokens.

Kept apart from ``OpenAIChat`` so each rule can be read and tested without a server.

Example:
    >>> text, calls = calls_in_text('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
    >>> text, calls[0].name, calls[0].parse().arguments
    ('', 'f', {'x': 1})
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agents.llm.base import LLMRequest, ToolCall
from prompts import count_message_tokens, count_tokens

__all__ = ["RawToolCall", "StreamedCalls", "calls_in_text", "parse_raw_calls", "repair_messages",
           "request_tokens", "tool_calls_text", "tool_names", "assistant_turn"]

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
"""Hermes / Qwen2.5's form (its chat template asks for it): a JSON object per block. A last block may be left
open when the model stopped at the end of its turn."""
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class BadArguments(ValueError):
    """A tool call whose name or arguments cannot be used; the message says why (shown to the model once)."""


@dataclass(frozen=True, slots=True)
class RawToolCall:
    """A tool call as the server sent it: arguments still JSON text (or already a dict)."""

    id: str
    name: str
    arguments: str | dict[str, Any]

    def parse(self) -> ToolCall:
        """The typed call; ``BadArguments`` when the name is missing or the arguments are not a JSON object."""
        if not self.name:
            raise BadArguments("the call names no tool")
        args: Any = self.arguments
        if isinstance(args, str):
            text = _FENCE.sub("", args.strip())
            if not text:
                args = {}
            else:
                try:
                    args = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise BadArguments(f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})") \
                        from None
            if isinstance(args, str):  # arguments encoded twice ("\"{...}\""): a common small-model habit
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass
        if not isinstance(args, dict):
            raise BadArguments(f"the arguments must be a JSON object, got {type(args).__name__}")
        return ToolCall(self.id, self.name, args)

    def to_message(self) -> dict[str, Any]:
        arguments = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": arguments}}


def parse_raw_calls(raw: list[RawToolCall]) -> tuple[list[ToolCall], dict[str, str]]:
    """(the calls that parse, call id → why it does not) — every problem at once, for one repair round."""
    calls, problems = [], {}
    for call in raw:
        try:
            calls.append(call.parse())
        except BadArguments as exc:
            problems[call.id] = str(exc)
    return calls, problems


def tool_names(tools: list[dict[str, Any]] | None) -> set[str]:
    """The names of the tools a request offers."""
    return {str((t.get("function") or {}).get("name")) for t in tools or [] if isinstance(t, dict)}


_LEAD = re.compile(r"(?:\s+|</?[\w-]*>|```(?:json)?)*")
"""What may come before or between calls written without the template's tags: whitespace, code fences, and tags
(an empty ``<tools></tools>`` echoed from the template, a stray ``<untrusted-data>``)."""


def _call_items(obj: Any, offered: set[str]) -> list[dict[str, Any]]:
    items = obj if isinstance(obj, list) else [obj]
    if items and all(isinstance(i, dict) and i.get("name") in offered and set(i) <= {"name", "arguments"}
                     for i in items):
        return items
    return []


def _bare_calls(text: str, offered: set[str]) -> list[RawToolCall]:
    """Calls a reply opens with, written as ``{"name": <an offered tool>, "arguments": {...}}`` objects (or lists of
    them) without the template's ``<tool_call>`` tags: fenced, between stray tags, or with the braces doubled as
    the template's own example shows them — how the embedded Qwen2.5-Coder writes them. Reading stops at the first
    thing that is not such a call (a small model may go on to invent the results); none when the reply opens
    with anything else."""
    if not offered:
        return []
    decoder, pos, items = json.JSONDecoder(), 0, []
    while True:
        match = _LEAD.match(text, pos)
        pos = match.end() if match else pos
        doubled = text.startswith("{{", pos)
        try:
            obj, end = decoder.raw_decode(text, pos + 1 if doubled else pos)
        except json.JSONDecodeError:
            break
        found = _call_items(obj, offered)
        if not found:
            break
        items += found
        pos = end + 1 if doubled and text.startswith("}", end) else end
    return [RawToolCall(f"call_{n}", i["name"], i.get("arguments", {})) for n, i in enumerate(items)]


def calls_in_text(text: str, *, offered: set[str] | None = None, first_id: int = 0) -> tuple[str, list[RawToolCall]]:
    """(the text outside the calls, the calls written in the text): ``<tool_call>`` blocks, how models whose chat
    template defines tool calls as text (Qwen2.5, Hermes) answer through a server that does not parse them; or,
    when ``offered`` names the request's tools, a reply that is only such a call's JSON (fenced or not)."""
    if "<tool_call>" not in text:
        bare = _bare_calls(text, offered or set())
        return ("", bare) if bare else (text, [])
    calls = []
    for i, match in enumerate(_BLOCK.finditer(text), start=first_id):
        body = _FENCE.sub("", match.group(1).strip())
        if not body:
            continue  # an empty block (a reply cut at max_tokens right after "<tool_call>") calls nothing
        try:
            obj = json.loads(body)
        except json.JSONDecodeError:
            calls.append(RawToolCall(f"call_{i}", _name_in(body), body))
            continue
        if not isinstance(obj, dict):
            calls.append(RawToolCall(f"call_{i}", "", body))
            continue
        arguments = obj.get("arguments", obj.get("parameters", {}))
        calls.append(RawToolCall(f"call_{i}", str(obj.get("name") or ""),
                                 arguments if isinstance(arguments, (dict, str)) else json.dumps(arguments)))
    return _BLOCK.sub("", text).strip(), calls


def _name_in(body: str) -> str:
    match = re.search(r'"name"\s*:\s*"([^"]+)"', body)
    return match.group(1) if match else ""


@dataclass(slots=True)
class StreamedCalls:
    """Tool-call deltas of a stream, joined by their index (id and name come once, arguments in pieces)."""

    ids: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    arguments: dict[int, list[str]] = field(default_factory=dict)

    def feed(self, deltas: list[Any], get: Any) -> None:
        """Add one chunk's ``delta.tool_calls`` (``get(obj, name)`` reads SDK objects and dicts alike)."""
        for position, delta in enumerate(deltas):
            index = get(delta, "index")
            index = index if isinstance(index, int) else position
            if get(delta, "id"):
                self.ids[index] = get(delta, "id")
            function = get(delta, "function")
            name, pieces = get(function, "name"), get(function, "arguments")
            if name:
                self.names[index] = self.names.get(index, "") + name
            self.arguments.setdefault(index, [])
            if isinstance(pieces, str):
                self.arguments[index].append(pieces)

    def raw(self) -> list[RawToolCall]:
        return [RawToolCall(self.ids.get(i) or f"call_{i}", self.names.get(i, ""), "".join(self.arguments[i]))
                for i in sorted(self.arguments)]


def repair_messages(request: LLMRequest, text: str, raw: list[RawToolCall],
                    problems: dict[str, str]) -> list[dict[str, Any]]:
    """The request's messages, then the model's turn as it wrote it and one tool message per call: the error for
    each call that cannot run, and for the others that nothing ran (the API wants every call answered)."""
    answers = []
    for call in raw:
        if call.id in problems:
            content = (f"Error: {problems[call.id]}. Call {call.name or 'the tool'} again with its arguments as "
                       f"one JSON object that matches the tool's parameters.")
        else:
            content = "Not run: another call of the same turn was malformed. Call it again if you still need it."
        answers.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return [*request.messages, assistant_turn(text, [c.to_message() for c in raw]), *answers]


def assistant_turn(text: str, tool_calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's turn as the next request repeats it: ``content`` only when it wrote text (OpenAI takes null,
    llama-cpp-python's server only a string or nothing), then its calls.

    Example:
        >>> assistant_turn("", [])
        {'role': 'assistant', 'tool_calls': []}
    """
    turn: dict[str, Any] = {"role": "assistant"}
    if text:
        turn["content"] = text
    turn["tool_calls"] = tool_calls
    return turn


def tool_calls_text(calls: list[ToolCall]) -> str:
    """The calls as the model writes them (name and JSON arguments): what its output tokens are counted from."""
    return "\n".join(json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls)


def request_tokens(request: LLMRequest, encoding: str = "o200k_base") -> int:
    """Input tokens of ``request``: its messages, the tool calls earlier turns made, and the tool specs, which a
    server puts into every prompt (counted as their JSON: OpenAI bills them as input tokens of every call)."""
    total = count_message_tokens(request.messages, encoding)
    for message in request.messages:
        for call in message.get("tool_calls") or []:
            total += count_tokens(json.dumps(call.get("function", call), ensure_ascii=False), encoding)
    if request.tools:
        total += count_tokens(json.dumps(request.tools, ensure_ascii=False), encoding)
    return total
