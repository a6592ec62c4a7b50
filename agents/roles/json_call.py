"""One LLM call that must return a wire-format reply (the JSON object, or the terse form its prompt asks
for), with exactly one repair round.

Every role goes through here, so "unreadable reply → one repair round with the parse error → clear
failure" is implemented once.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agents.errors import InvalidLLMOutputError
from agents.llm.base import LLM, LLMReply, LLMRequest, LLMStreamTruncated, Role, Spend, Usage
from planning.errors import PlanningError
from prompts import count_message_tokens, count_tokens, load_prompt
from prompts.registry import ReplyForm

__all__ = ["JsonCall", "abandoned_spend", "call_json", "close_stream", "repair_messages", "reply_record"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class JsonCall(Generic[T]):
    value: T
    spend: Spend
    raw: str


def reply_record(role: Role, messages: list[dict[str, Any]], reply: LLMReply | None,
                 error: str | None = None) -> dict[str, Any]:
    """A compact record of one LLM call, for the event log and ReplayLLM."""
    return {
        "role": role,
        "messages": messages,
        "reply_text": reply.text if reply else "",
        "usage": reply.usage.model_dump() if reply else Usage().model_dump(),
        "latency_s": reply.latency_s if reply else 0.0,
        "model": reply.model if reply else "",
        "error": error,
        "ended_at": time.time(),
    }


def abandoned_spend(role: Role, convo: list[dict[str, Any]], partial: str, error: str | None,
                    latency_s: float = 0.0) -> Spend:
    """What a stream cut or abandoned mid-answer cost: the server never sent its usage chunk, so count it (the
    record carries the same counts, so a trace shows what the call cost). ``error=None``: stopped on purpose
    (``call_json(settle=...)``), which the record says in ``stopped_early`` instead of as a failure."""
    usage = Usage(llm_calls=1, input_tokens=count_message_tokens(convo), output_tokens=count_tokens(partial))
    record = reply_record(role, convo, LLMReply(text=partial, usage=usage, latency_s=latency_s), error=error)
    if error is None:
        record["stopped_early"] = "the reply had settled what it decides; the rest was not decoded"
    return Spend(usage, (record,))


async def close_stream(stream: AsyncIterator[str | LLMReply]) -> None:
    """Close a reply stream now, not when the garbage collector gets to it: the embedded model serves one request
    at a time, and every other call waits behind an unread stream."""
    aclose = getattr(stream, "aclose", None)  # the LLM protocol asks for an async iterator, not a generator
    if aclose is not None:
        await aclose()


_STREAM_RESENDS = 1
"""A reply streamed for a reader (``call_json(on_text=...)``) and cut mid-answer is sent again this many times."""

_EXPECTED: dict[ReplyForm, str] = {"json": "the corrected JSON object", "terse": "the corrected lines in the form asked for"}


def repair_messages(messages: list[dict[str, Any]], raw: str, error: str,
                    form: ReplyForm = "json") -> list[dict[str, Any]]:
    """The conversation for the repair round: the bad answer, then the repair instruction."""
    repair = load_prompt("repair").render(error=error, expected=_EXPECTED[form]).messages
    follow_up = [m for m in repair if m["role"] == "user"]
    return [*messages, {"role": "assistant", "content": raw}, *follow_up]


async def call_json(
    llm: LLM,
    *,
    role: Role,
    messages: list[dict[str, Any]],
    parse: Callable[[str], T],
    json_schema: dict[str, Any] | None = None,
    metadata: dict[str, str] | None = None,
    max_tokens: int | None = None,
    form: ReplyForm = "json",
    grammar: str | None = None,
    settle: Callable[[str], T | None] | None = None,
    on_text: Callable[[str], None] | None = None,
) -> JsonCall[T]:
    """Ask ``llm`` for a reply in ``form`` and parse it; one repair round on a parse/validation error.
    ``form="terse"`` asks for plain text (no schema): ``parse`` still reads JSON too, whichever comes back; a
    ``grammar`` constrains that text where the backend takes one (the embedded llama.cpp server).

    ``parse`` raises a ``PlanningError`` (its message is shown to the model) on bad output.
    LLM transport errors (``LLMError``) propagate: the caller decides whether the task fails.

    ``settle``: the reply is streamed and read only until ``settle(text so far)`` returns a value, which is the
    result (the stream is closed and what it wrote is counted); a reply that is complete when it settles is
    parsed whole instead, so a backend that sends everything at once loses nothing.

    ``on_text``: the reply is streamed and ``on_text(text so far)`` called after each piece (with ``""`` as each
    round starts), for a reader of the reply as it is written (``agents.roles.answer_feed``).
    """
    spend = Spend()
    convo = list(messages)
    error = ""
    raw = ""
    for round_no in range(2):
        request = LLMRequest(role=role, messages=convo, response_format="json" if form == "json" else "text",
                             json_schema=json_schema if form == "json" else None,
                             grammar=grammar if form == "terse" else None,
                             metadata=dict(metadata or {}, round=str(round_no)), max_tokens=max_tokens)
        if settle is None and on_text is not None:
            reply, cut = await _read_along(llm, request, on_text, convo)
            spend = spend + cut
        elif settle is None:
            reply = await llm.complete(request)
        else:
            started = time.monotonic()
            read = await _read_until_settled(llm, request, parse, settle)
            if not isinstance(read, LLMReply):
                value, partial = read
                stopped = abandoned_spend(role, convo, partial, None, latency_s=time.monotonic() - started)
                return JsonCall(value, spend + stopped, partial)
            reply = read
        spend = spend + Spend(reply.usage, (reply_record(role, convo, reply),))
        raw = reply.text
        try:
            return JsonCall(parse(raw), spend, raw)
        except PlanningError as exc:
            error = str(exc)
            convo = repair_messages(messages, raw, error, form)
    raise InvalidLLMOutputError(role, error, raw).with_spend(spend)


async def _read_until_settled(llm: LLM, request: LLMRequest, parse: Callable[[str], T],
                              settle: Callable[[str], T | None]) -> LLMReply | tuple[T, str]:
    pieces = llm.stream(request.model_copy(update={"stream": True}))
    text = ""
    try:
        async for piece in pieces:
            if isinstance(piece, LLMReply):
                return piece
            text += piece
            value = settle(text)
            if value is not None and not _parses(parse, text):
                return value, text
    finally:
        await close_stream(pieces)
    raise InvalidLLMOutputError(request.role, "the reply stream ended without its final reply", text)


async def _read_along(llm: LLM, request: LLMRequest, on_text: Callable[[str], None],
                      convo: list[dict[str, Any]]) -> tuple[LLMReply, Spend]:
    """The whole reply, read along; a stream cut mid-reply (``LLMStreamTruncated``: the SDK retries only failures
    before a stream opens) is sent again once, as the planner does, with what the cut one wrote counted."""
    cut = Spend()
    for resend in range(_STREAM_RESENDS + 1):
        pieces = llm.stream(request.model_copy(update={"stream": True}))
        text = ""
        on_text(text)
        started = time.monotonic()
        try:
            async for piece in pieces:
                if isinstance(piece, LLMReply):
                    return piece, cut
                text += piece
                on_text(text)
        except LLMStreamTruncated as exc:
            if resend == _STREAM_RESENDS:
                raise
            cut = cut + abandoned_spend(request.role, convo, text, str(exc), time.monotonic() - started)
            continue
        finally:
            await close_stream(pieces)
        raise InvalidLLMOutputError(request.role, "the reply stream ended without its final reply", text)
    raise AssertionError("unreachable")


def _parses(parse: Callable[[str], T], text: str) -> bool:
    try:
        parse(text)
    except PlanningError:
        return False
    return True
