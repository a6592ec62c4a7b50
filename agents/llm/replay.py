"""ReplayLLM: answers requests from recorded calls, so a recorded task re-runs with no model at all.

Each request is matched to a record of the same role and request fingerprint, in recorded order, so
parallel executors asking in a different order still get their own answers. In strict mode (the default)
a request that was never recorded raises ``LLMReplayMismatch`` showing the first message that differs from
the next recorded call of that role — usually a prompt or code change since the recording. With
``strict=False`` such a request gets the next unused record of its role instead.

Example:
    >>> import asyncio
    >>> msgs = [{"role": "user", "content": "hi"}]
    >>> llm = ReplayLLM([{"role": "router", "messages": msgs, "reply_text": '{"route": "direct"}'}])
    >>> asyncio.run(llm.complete(LLMRequest(role="router", messages=msgs))).text
    '{"route": "direct"}'
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from agents.llm.base import LLMError, LLMReplayMismatch, LLMReply, LLMRequest, LLMToolsUnsupported
from agents.llm.function_llm import stream_reply
from agents.llm.profile import HOSTED, ModelProfile
from agents.llm.records import LLMCallRecord, request_fingerprint

__all__ = ["ReplayLLM", "error_class"]

_SHOWN_CHARS = 200
_TOOLS_REJECTED = LLMToolsUnsupported.__name__


def error_class(name: str | None) -> type[LLMError]:
    """The ``LLMError`` subclass called ``name`` (``LLMError`` itself for any other name).

    Example:
        >>> error_class("LLMTimeoutError").__name__
        'LLMTimeoutError'
    """
    pending: list[type[LLMError]] = [LLMError]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name:
            return cls
        pending.extend(cls.__subclasses__())
    return LLMError


def _shorten(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def _tools_at_start(records: Sequence[LLMCallRecord]) -> bool | None:
    """``tools_supported`` of the recorded backend before its first call, as the records show it."""
    # A role offers a native tool (the typed reviewer's final_result) only where the backend declares tools
    # that were not rejected (agents.roles.output_tool.offers_tools), and the offer changes the prompt the
    # record's fingerprint holds: a replay that decided otherwise would match no record. Records keep no
    # request's tools, but two facts are proof: a reply with tool calls had tools offered and taken
    # (OpenAIChat then says True); a recorded rejection had them offered until that call (replaying it turns
    # them off, as OpenAIChat remembers it). With neither, no tool was ever taken, as with a backend that has
    # none (FunctionLLM, SimulatedLLM): False asks as those do, as a ReplayLLM that declared nothing did.
    if any(r.error_type == _TOOLS_REJECTED for r in records):
        return None
    return any(r.tool_calls for r in records)


def _first_difference(recorded: list[dict[str, Any]], requested: list[dict[str, Any]]) -> str:
    for index, (old, new) in enumerate(zip(recorded, requested, strict=False)):
        if old != new:
            return f"message {index} differs:\n  recorded:  {_shorten(old)}\n  requested: {_shorten(new)}"
    if len(recorded) != len(requested):
        return (f"the recorded call has {len(recorded)} messages, the request {len(requested)} "
                f"(first {min(len(recorded), len(requested))} equal)")
    return "the messages are equal (the record's fingerprint was computed differently)"


class ReplayLLM:
    """Replays ``LLMCallRecord``s (or their dicts, e.g. from the event log); see the module docstring.

    Recorded failures are raised again as the same ``LLMError`` class; usage, latency and model come from
    the record (no sleeping). Streams replay in ``stream_chunk_size``-character chunks.

    Example:
        >>> ReplayLLM([]).remaining()
        {}
    """

    def __init__(self, records: Sequence[LLMCallRecord] | Sequence[Mapping[str, Any]], *, strict: bool = True,
                 stream_chunk_size: int | None = None, chunk_delay_s: float = 0.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, profile: ModelProfile = HOSTED) -> None:
        self.profile = profile
        """The recorded model's profile: the roles must ask for the same prompts they were recorded with."""
        parsed = [r if isinstance(r, LLMCallRecord) else LLMCallRecord.model_validate(dict(r))
                  for r in records]
        self._by_role: dict[str, list[LLMCallRecord]] = {}
        for record in parsed:
            self._by_role.setdefault(record.role, []).append(record)
        self._used: set[tuple[str, int]] = set()
        self._tools_supported = _tools_at_start(parsed)
        self.strict = strict
        self.stream_chunk_size = stream_chunk_size
        self.chunk_delay_s = chunk_delay_s
        self._sleep = sleep

    def _take(self, request: LLMRequest) -> LLMCallRecord:
        candidates = self._by_role.get(request.role, [])
        unused = [(i, r) for i, r in enumerate(candidates) if (request.role, i) not in self._used]
        if not unused:
            raise LLMReplayMismatch(
                f"ReplayLLM: no recorded {request.role!r} call left ({len(candidates)} recorded, all used): "
                f"the code now calls the {request.role} more often than when the task was recorded")
        fingerprint = request_fingerprint(request.role, request.messages)
        match = next(((i, r) for i, r in unused if r.request_fingerprint == fingerprint), None)
        if match is None:
            if self.strict:
                expected = unused[0][1]
                raise LLMReplayMismatch(
                    f"ReplayLLM: this {request.role!r} request was never recorded; compared with the next "
                    f"recorded {request.role} call (seq {expected.seq}), "
                    f"{_first_difference(expected.messages, request.messages)}\n"
                    f"Re-record the task, or replay with strict=False to answer in recorded order.")
            match = unused[0]
        self._used.add((request.role, match[0]))
        return match[1]

    @property
    def tools_supported(self) -> bool | None:
        """Whether the recorded backend took requests with ``tools``, as ``OpenAIChat.tools_supported`` says
        it (``None``: offered, none sent yet), read from the records: roles replay with the prompts they were
        recorded with."""
        return self._tools_supported

    async def complete(self, request: LLMRequest) -> LLMReply:
        record = self._take(request)
        if record.error_type == _TOOLS_REJECTED:
            self._tools_supported = False
        if record.failed:
            raise error_class(record.error_type)(f"replayed: {record.error}")
        return record.reply()

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        reply = await self.complete(request)
        async with contextlib.aclosing(stream_reply(reply, self.stream_chunk_size, chunk_delay_s=self.chunk_delay_s,
                                                    sleep=self._sleep)) as items:  # see FunctionLLM.stream
            async for item in items:
                yield item

    def remaining(self) -> dict[str, int]:
        """Unused records per role (roles with none left are omitted)."""
        left = {role: sum(1 for i in range(len(rs)) if (role, i) not in self._used)
                for role, rs in self._by_role.items()}
        return {role: n for role, n in left.items() if n}

    def __repr__(self) -> str:
        return f"ReplayLLM(remaining={self.remaining()}, strict={self.strict})"

