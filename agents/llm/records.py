"""Records of LLM calls (for the event log and ``ReplayLLM``) and ``RecordingLLM``, which makes them.

A record holds the request (role + messages, with a fingerprint to match it on replay) and what came back:
the reply text, usage, latency and model — or the error. It never holds credentials: backends keep API
keys in private attributes and requests carry none, so event logs and checkpoints built from records are
safe to share.

Example:
    >>> record = LLMCallRecord(role="router", messages=[{"role": "user", "content": "hi"}], reply_text="{}")
    >>> record.request_fingerprint == request_fingerprint("router", [{"role": "user", "content": "hi"}])
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.llm.profile import profile_of
from agents.llm.base import LLM, LLMReply, LLMRequest, Role, ToolCall, Usage
from prompts import count_message_tokens, count_tokens

__all__ = ["ABANDONED", "LLMCallRecord", "RecordingLLM", "request_fingerprint"]

ABANDONED = "abandoned: the caller stopped reading the stream before its end"
"""``error`` of a record whose stream the caller closed early (a reply, not a failure: replay plays it)."""


def request_fingerprint(role: str, messages: list[dict[str, Any]]) -> str:
    """sha256 of the role and the canonical JSON of the messages: equal requests, equal fingerprints.

    Example:
        >>> len(request_fingerprint("planner", []))
        64
    """
    canonical = json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(f"{role}\n{canonical}".encode()).hexdigest()


class LLMCallRecord(BaseModel):
    """One LLM call as it happened. Extra keys (``ended_at`` of the roles' compact records) are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    task_id: str = ""
    seq: int = 0
    """Order of the call within its recording (1-based)."""
    role: Role
    messages: list[dict[str, Any]]
    request_fingerprint: str = ""
    """Filled from ``role`` + ``messages`` when not given."""
    reply_text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The tools the reply called (native function calling); replayed with the text."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    error: str | None = None
    """Why the call failed (``"LLMTimeoutError: ..."``) or, for an abandoned stream, ``ABANDONED``."""
    error_type: str | None = None
    """Class name of the exception when the call itself failed; ``None`` when a reply came back."""

    @model_validator(mode="before")
    @classmethod
    def _fill_fingerprint(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("request_fingerprint") and "role" in data:
            fingerprint = request_fingerprint(data["role"], data.get("messages", []))
            data = {**data, "request_fingerprint": fingerprint}
        return data

    @property
    def failed(self) -> bool:
        """True when the call raised instead of replying."""
        return self.error_type is not None

    def reply(self) -> LLMReply:
        """The recorded reply (raises ``ValueError`` for a failed call: use ``failed`` first)."""
        if self.failed:
            raise ValueError(f"call {self.seq} ({self.role}) failed with {self.error_type}; it has no reply")
        return LLMReply(text=self.reply_text, usage=self.usage, latency_s=self.latency_s, model=self.model,
                        tool_calls=self.tool_calls)


class RecordingLLM:
    """Wraps any ``LLM``; hands a ``LLMCallRecord`` of every call (failures too) to ``sink``, then passes
    the reply or error through unchanged.

    ``task_id`` defaults to the request's ``metadata["task_id"]``.

    Example:
        >>> from agents.llm.function_llm import FunctionLLM
        >>> records = []
        >>> llm = RecordingLLM(FunctionLLM(lambda r: "ok"), records.append, task_id="t1")
    """

    def __init__(self, inner: LLM, sink: Callable[[LLMCallRecord], None], task_id: str = "",
                 *, clock: Callable[[], float] = time.perf_counter) -> None:
        self.inner = inner
        self.profile = profile_of(inner)
        self._sink = sink
        self.task_id = task_id
        self._clock = clock
        self._seq = 0

    def _record(self, request: LLMRequest, *, reply: LLMReply | None = None, text: str = "",
                usage: Usage | None = None, latency_s: float = 0.0,
                error: BaseException | str | None = None) -> None:
        self._seq += 1
        failed = isinstance(error, BaseException)
        self._sink(LLMCallRecord(
            task_id=self.task_id or request.metadata.get("task_id", ""), seq=self._seq, role=request.role,
            messages=request.messages, reply_text=reply.text if reply else text,
            tool_calls=reply.tool_calls if reply else [],
            usage=reply.usage if reply else (usage or Usage()),
            latency_s=reply.latency_s if reply else latency_s,
            model=reply.model if reply else "",
            error=f"{type(error).__name__}: {error}" if failed else error,
            error_type=type(error).__name__ if failed else None))

    async def complete(self, request: LLMRequest) -> LLMReply:
        started = self._clock()
        try:
            reply = await self.inner.complete(request)
        except Exception as exc:
            self._record(request, latency_s=self._clock() - started, error=exc)
            raise
        self._record(request, reply=reply)
        return reply

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        started = self._clock()
        parts: list[str] = []
        recorded = False
        try:
            async with contextlib.aclosing(self.inner.stream(request)) as items:
                async for item in items:
                    if isinstance(item, LLMReply):
                        recorded = True
                        self._record(request, reply=item)
                    else:
                        parts.append(item)
                    yield item
        except Exception as exc:
            if not recorded:
                recorded = True
                self._record(request, text="".join(parts), latency_s=self._clock() - started, error=exc)
            raise
        finally:
            if not recorded:
                # Closed early (GeneratorExit, cancellation): still a real, costed call — record what
                # streamed so far, so the event log's token counts stay exact.
                text = "".join(parts)
                self._record(request, text=text, latency_s=self._clock() - started, error=ABANDONED,
                             usage=Usage(llm_calls=1, input_tokens=count_message_tokens(request.messages),
                                         output_tokens=count_tokens(text)))

    def __repr__(self) -> str:
        return f"RecordingLLM({self.inner!r}, task_id={self.task_id!r})"

