"""One LLM call that must return a wire-format reply (the JSON object, or the terse form its prompt asks
for), with exactly one repair round.

Every role goes through here, so "unreadable reply → one repair round with the parse error → clear
failure" is implemented once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agents.errors import InvalidLLMOutputError
from agents.llm.base import LLM, LLMReply, LLMRequest, Role, Spend, Usage
from planning.errors import PlanningError
from prompts import load_prompt
from prompts.registry import ReplyForm

__all__ = ["JsonCall", "call_json", "repair_messages", "reply_record"]

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
) -> JsonCall[T]:
    """Ask ``llm`` for a reply in ``form`` and parse it; one repair round on a parse/validation error.
    ``form="terse"`` asks for plain text (no schema): ``parse`` still reads JSON too, whichever comes back; a
    ``grammar`` constrains that text where the backend takes one (the embedded llama.cpp server).

    ``parse`` raises a ``PlanningError`` (its message is shown to the model) on bad output.
    LLM transport errors (``LLMError``) propagate: the caller decides whether the task fails.
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
        reply = await llm.complete(request)
        spend = spend + Spend(reply.usage, (reply_record(role, convo, reply),))
        raw = reply.text
        try:
            return JsonCall(parse(raw), spend, raw)
        except PlanningError as exc:
            error = str(exc)
            convo = repair_messages(messages, raw, error, form)
    raise InvalidLLMOutputError(role, error, raw).with_spend(spend)
