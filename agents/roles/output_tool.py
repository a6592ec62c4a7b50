"""The typed output held to its schema by the provider, for the reviewer's terse reply form: the answer is the
arguments of a final native tool call (``final_result``, whose parameters are the output's JSON schema, as
pydantic-ai's default tool output mode and the Agents SDK wrap it), while the verdict stays the reply's text.

The reviewer still decides in its first line (``accept 5 5 5``; a retry, replan or escalate calls no tool); only an
accept's answer goes through the tool. ``OutputToolLLM`` offers the tool, then hands the roles the reply in the terse
form they read (``accept 5 5 5\\nanswer: <the arguments' JSON>``), also while it streams: the tool call's argument
pieces become the answer's text, so ``answer_delta`` carries the output's JSON as the model writes it. A type whose
schema is not an object is wrapped as ``{"response": <value>}`` (a tool's parameters are an object) and unwrapped
here, also piece by piece. ``strict: true`` (OpenAI's structured outputs for tools) is set where the schema allows it.

Where the backend does not take tools (``tools_supported`` is False on it, after the server rejected them once), the
request goes out as before tools: the tool's line in the prompt is swapped for the schema line (``schema_line``) and
code alone validates the answer.

    >>> spec = OutputSpec(type_path="int", json_schema={"type": "integer"})
    >>> tool, wrapped = output_tool(spec)
    >>> wrapped, tool["function"]["strict"], tool["function"]["parameters"]["required"]
    (True, True, ['response'])
    >>> answer_text('{"response": 42}', {"response": 42}, wrapped)
    '42'
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from agents.llm._openai_stream import STREAM_TOOL_ARGUMENTS, ToolArgumentsDelta
from agents.llm.base import LLM, LLMReply, LLMRequest, LLMToolsUnsupported, ToolCall
from agents.llm.profile import profile_of
from agents.outputs import OutputSpec, schema_line

__all__ = ["FINAL_RESULT", "OutputToolLLM", "answer_text", "offers_tools", "output_tool", "strict_parameters",
           "tool_line"]

FINAL_RESULT = "final_result"
_WRAP = "response"
_STRUCTURAL = {"properties", "$defs", "definitions", "items", "additionalProperties", "anyOf"}
_NOT_STRICT = {"default", "allOf", "oneOf", "not", "if", "then", "else", "prefixItems", "patternProperties",
               "propertyNames", "minProperties", "maxProperties", "unevaluatedProperties", "unevaluatedItems",
               "dependentRequired", "dependentSchemas", "contains", "minLength", "maxLength", "pattern", "format",
               "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
               "uniqueItems"}
"""Keywords OpenAI's strict mode refuses, or did in some model versions: a schema with one is sent non-strict."""


class _NotStrict(Exception):
    pass


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    if _NOT_STRICT & node.keys():
        raise _NotStrict
    out = {k: v for k, v in node.items() if k not in _STRUCTURAL}
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            out[key] = {name: _strict(sub) for name, sub in node[key].items()}
    for key in ("items", "anyOf"):
        if key in node:
            out[key] = _strict(node[key])
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties", False) is not False:
            raise _NotStrict  # a free dict (``dict[str, float]``): strict mode has no form for it
        if set(node.get("required", ())) != set(node.get("properties", {})):
            raise _NotStrict  # an optional field: strict mode requires every property
        out["additionalProperties"] = False
    return out


def strict_parameters(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` as OpenAI's strict mode takes it (every object closed), or None where strict mode cannot hold it
    (optional fields, free dicts, bounds and formats): then the tool is sent non-strict and code validates.

        >>> strict_parameters({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})
        {'type': 'object', 'required': ['a'], 'properties': {'a': {'type': 'integer'}}, 'additionalProperties': False}
        >>> strict_parameters({"type": "object", "additionalProperties": {"type": "number"}}) is None
        True
    """
    try:
        return _strict(schema)
    except _NotStrict:
        return None


def output_tool(spec: OutputSpec) -> tuple[dict[str, Any], bool]:
    """The ``final_result`` tool for ``spec`` (OpenAI's tool form) and whether its value is wrapped in ``response``."""
    schema = json.loads(json.dumps(spec.json_schema))
    wrapped = schema.get("type") != "object"
    if wrapped:
        defs = {k: schema.pop(k) for k in ("$defs", "definitions") if k in schema}  # "#/$defs/..." resolves at the root
        schema = {"type": "object", "properties": {_WRAP: schema}, "required": [_WRAP], **defs}
    strict = strict_parameters(schema)
    function: dict[str, Any] = {
        "name": FINAL_RESULT,
        "description": "The answer for the user, as the task's output type. Call it only when you accept.",
        "parameters": strict if strict is not None else schema, "strict": strict is not None}
    return {"type": "function", "function": function}, wrapped


def tool_line(wrapped: bool) -> str:
    """The line the terse reviewer's prompt gets when the answer goes through the tool."""
    what = f"its argument {_WRAP!r} is the answer" if wrapped else "its arguments are the answer"
    return (f"When you accept, write the verdict line (e.g. 'accept 5 5 5'), then call the tool {FINAL_RESULT} "
            f"({what}) instead of writing an 'answer:' line. Retry, replan and escalate call no tool.")


_WRAPPER_HEAD = re.compile(rf'\s*\{{\s*"{_WRAP}"\s*:\s*')
_WRAPPER_TAIL = re.compile(r"\s*\}\s*$")


def answer_text(raw: str, arguments: dict[str, Any], wrapped: bool) -> str:
    """The answer's JSON text from the call's arguments: their text as the model wrote it (what streamed), unwrapped,
    where it reads as the parsed arguments; else the arguments written again (a repaired call, a server that sent
    them parsed)."""
    value: Any = arguments.get(_WRAP, arguments) if wrapped else arguments
    text = raw.strip()
    if wrapped:
        head, tail = _WRAPPER_HEAD.match(text), _WRAPPER_TAIL.search(text)
        text = text[head.end():tail.start()] if head and tail and head.end() <= tail.start() else ""
    try:
        if text and json.loads(text) == value:
            return text
    except ValueError:
        pass
    return json.dumps(value, ensure_ascii=False)


class _Unwrap:
    """The answer's text out of the arguments' pieces as they stream: leading space dropped, and for a wrapped value
    the ``{"response":`` head and the closing brace left out (a trailing run of braces and space waits for what
    follows, so nothing sent is taken back)."""

    def __init__(self, wrapped: bool) -> None:
        self._wrapped, self._raw, self._sent = wrapped, "", 0

    def feed(self, piece: str) -> str:
        self._raw += piece
        if self._wrapped:
            head = _WRAPPER_HEAD.match(self._raw)
            if head is None or head.end() == len(self._raw):
                return ""  # the head is not complete (or nothing follows it yet)
            body = self._raw[head.end():].rstrip(" \t\r\n}")
        else:
            body = self._raw.lstrip()
        new, self._sent = body[self._sent:], max(self._sent, len(body))
        return new


def _base(llm: Any) -> Any:
    for _ in range(8):  # wrappers of wrappers (metering, recording), never a cycle
        if hasattr(llm, "tools_supported"):
            return llm
        llm = getattr(llm, "inner", None)
        if llm is None:
            break
    return None


def offers_tools(llm: LLM) -> bool:
    """Whether the reviewer's answer may go through a tool call on ``llm``: its backend declares native tool calls
    (``tools_supported``, as ``OpenAIChat`` does) and has not had them rejected, and it sends no grammar (a
    grammar-held reply is text only)."""
    base = _base(llm)
    return base is not None and base.tools_supported is not False and not profile_of(llm).grammar


def _answer_opening(written: str) -> str:
    """What follows ``written`` (the verdict) before the tool's answer: the answer line, on a line of its own."""
    return "answer: " if not written or written.endswith("\n") else "\nanswer: "


def _joined(content: str, answer: str) -> str:
    """The terse reply: the verdict the model wrote, then the tool's answer (an answer line it wrote too gives way)."""
    lines = content.split("\n")
    cut = next((i for i, line in enumerate(lines) if re.match(r"\s*answer\s*:", line, re.IGNORECASE)), len(lines))
    head = "\n".join(lines[:cut])
    return f"{head}{_answer_opening(head)}{answer}"


class OutputToolLLM:
    """``inner`` for one typed review in the terse form: each request offers the ``final_result`` tool, each reply
    comes back in the terse form with the tool's arguments as its answer (see the module docstring)."""

    def __init__(self, inner: LLM, spec: OutputSpec) -> None:
        self.inner = inner
        self.profile = profile_of(inner)
        self._tool, self._wrapped = output_tool(spec)
        self._line, self._fallback_line = tool_line(self._wrapped), schema_line(spec)

    @property
    def line(self) -> str:
        """The prompt's added line while the tool is offered."""
        return self._line

    def _tooled(self, request: LLMRequest, stream: bool) -> LLMRequest | None:
        """``request`` with the tool, or None where the backend has refused tools (then ``_prompted``)."""
        if not offers_tools(self.inner):
            return None
        metadata = {**request.metadata, STREAM_TOOL_ARGUMENTS: "yes"} if stream else request.metadata
        return request.model_copy(update={"tools": [self._tool], "tool_choice": "auto", "parallel_tool_calls": False,
                                          "metadata": metadata})

    def _prompted(self, request: LLMRequest) -> LLMRequest:
        messages = [{**m, "content": m["content"].replace(self._line, self._fallback_line)}
                    if isinstance(m.get("content"), str) else m for m in request.messages]
        return request.model_copy(update={"messages": messages})

    def _terse(self, reply: LLMReply, raw: str = "") -> LLMReply:
        final = next((c for c in reply.tool_calls if c.name == FINAL_RESULT), None)
        if final is None:
            return reply.model_copy(update={"tool_calls": []}) if reply.tool_calls else reply
        answer = answer_text(raw or _dumped(final), final.arguments, self._wrapped)
        return reply.model_copy(update={"text": _joined(reply.text, answer), "tool_calls": []})

    async def complete(self, request: LLMRequest) -> LLMReply:
        tooled = self._tooled(request, stream=False)
        if tooled is not None:
            try:
                return self._terse(await self.inner.complete(tooled))
            except LLMToolsUnsupported:
                pass  # remembered by the backend: the next request goes out without tools at once
        return await self.inner.complete(self._prompted(request))

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        tooled = self._tooled(request, stream=True)
        if tooled is not None:
            try:
                async with contextlib.aclosing(self._stream_tooled(tooled)) as items:
                    async for item in items:
                        yield item
                return
            except LLMToolsUnsupported:
                pass  # raised before the stream opened: nothing was yielded
        async with contextlib.aclosing(self.inner.stream(self._prompted(request))) as items:
            async for item in items:
                yield item

    async def _stream_tooled(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        raw, sent, unwrap = "", "", _Unwrap(self._wrapped)
        call: int | None = None  # the final call whose arguments stream: one is asked for, any other is left out
        async with contextlib.aclosing(self.inner.stream(request)) as items:
            async for item in items:
                if isinstance(item, LLMReply):
                    reply = self._terse(item, raw)
                    if len(reply.text) > len(sent) and reply.text.startswith(sent):
                        yield reply.text[len(sent):]  # what the unwrapping held back: the pieces add up to the text
                    yield reply
                    return
                piece = ""
                if not isinstance(item, ToolArgumentsDelta):
                    piece = "" if call is not None else item  # text after the call began: in the final reply only
                elif item.name == FINAL_RESULT and call in (None, item.index):
                    if call is None:
                        call, piece = item.index, _answer_opening(sent)
                    raw += item
                    piece += unwrap.feed(item)
                if piece:
                    sent += piece
                    yield piece

    def __repr__(self) -> str:
        return f"OutputToolLLM({self.inner!r})"


def _dumped(call: ToolCall) -> str:
    return json.dumps(call.arguments, ensure_ascii=False)
