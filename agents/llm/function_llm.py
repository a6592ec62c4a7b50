"""FunctionLLM: a chat model backed by a plain Python function — how tests and checks script every role.

The function gets the ``LLMRequest`` and returns the reply text (or a full ``LLMReply``, e.g. one with
``tool_calls`` to script native function calling); it may be sync or async. Text replies are costed like a real call: one LLM call, input tokens counted from the messages
and output tokens from the text with tiktoken, so token budgets behave as they would against a server.
``stream()`` cuts the text into ``stream_chunk_size``-character deltas so the streaming plan parser is
exercised exactly as with a real streaming model.

Example:
    >>> import asyncio
    >>> llm = FunctionLLM(lambda request: '{"route": "plan"}', stream_chunk_size=4)
    >>> request = LLMRequest(role="router", messages=[{"role": "user", "content": "hi"}])
    >>> reply = asyncio.run(llm.complete(request))
    >>> reply.text, reply.usage.llm_calls
    ('{"route": "plan"}', 1)
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from agents.llm._tool_calls import request_tokens, tool_calls_text
from agents.errors import short_repr
from agents.llm.base import LLMError, LLMReply, LLMRequest, ToolCall, Usage
from agents.llm.profile import HOSTED, ModelProfile
from prompts import count_tokens

__all__ = ["FunctionLLM", "FunctionLLMError", "FunctionLLMReturnError", "ReplyFn", "chunk_text", "counted_reply", "stream_reply"]

ReplyFn = Callable[[LLMRequest], "str | LLMReply | Awaitable[str | LLMReply]"]
"""What ``FunctionLLM`` calls: ``fn(request) -> str | LLMReply`` (or an awaitable of one)."""

Sleep = Callable[[float], Awaitable[Any]]


_MUST_RETURN = "a FunctionLLM function must return the reply text (str) or an LLMReply"


class FunctionLLMError(LLMError):
    """The user's own reply function (``FunctionLLM(fn)``, or a scripted reply) broke: it raised, or returned
    something that is not a reply. The bug is in that script, not in tetrarch: the message names the function and
    what it did. An ``LLMError`` like a failing server's, so the task fails with it as ``result.error``
    (``llm_unavailable``) instead of an internal error; never retried (the same script breaks the same way)."""

    def __init__(self, message: str, *, function: str, role: str) -> None:
        super().__init__(message)
        self.function, self.role = function, role


class FunctionLLMReturnError(FunctionLLMError, TypeError):
    """The reply function returned something that is not a reply (None, a dict, …)."""


def function_name(fn: object) -> str:
    """How messages name the user's reply function: its qualified name, or its type's for a callable object."""
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def counted_reply(request: LLMRequest, text: str, *, model: str, latency_s: float = 0.0,
                  encoding: str = "o200k_base", tool_calls: Sequence[ToolCall] = ()) -> LLMReply:
    """An ``LLMReply`` for ``text`` costed as one call, with tokens counted by tiktoken (the request's tool specs
    count as input, as a server puts them into the prompt; ``tool_calls`` as output, as the model writes them).
    A ``FunctionLLM`` fn scripting native calls returns ``counted_reply(request, "", model=..., tool_calls=[...])``.

    Example:
        >>> req = LLMRequest(role="executor", messages=[{"role": "user", "content": "hi"}])
        >>> counted_reply(req, "hello", model="m").usage.output_tokens
        1
    """
    written = text + (tool_calls_text(list(tool_calls)) if tool_calls else "")
    usage = Usage(llm_calls=1, input_tokens=request_tokens(request, encoding),
                  output_tokens=count_tokens(written, encoding))
    return LLMReply(text=text, usage=usage, latency_s=latency_s, model=model, tool_calls=list(tool_calls))


def chunk_text(text: str, size: int | None) -> list[str]:
    """``text`` cut into pieces of ``size`` characters (the whole text as one piece when ``size`` is None).

    Example:
        >>> chunk_text("abcde", 2)
        ['ab', 'cd', 'e']
    """
    if not text:
        return []
    if size is None:
        return [text]
    return [text[i:i + size] for i in range(0, len(text), size)]


async def stream_reply(reply: LLMReply, chunk_size: int | None, *, chunk_delay_s: float = 0.0,
                       sleep: Sleep = asyncio.sleep) -> AsyncIterator[str | LLMReply]:
    """Yield ``reply.text`` in chunks (sleeping ``chunk_delay_s`` before each, else yielding the event loop a
    turn between them), then ``reply`` itself."""
    for i, piece in enumerate(chunk_text(reply.text, chunk_size)):
        if chunk_delay_s > 0:
            await sleep(chunk_delay_s)
        elif i:
            # A real stream gives the reader's event loop a turn between chunks (they come off a socket); a fake
            # that did not would hand over the whole plan at once, and nothing could start before it ends.
            await asyncio.sleep(0)
        yield piece
    yield reply


def _check_chunking(stream_chunk_size: int | None, chunk_delay_s: float) -> None:
    if stream_chunk_size is not None and stream_chunk_size < 1:
        raise ValueError(f"stream_chunk_size must be a positive number of characters or None (the whole "
                         f"text as one chunk), got {stream_chunk_size}")
    if chunk_delay_s < 0:
        raise ValueError(f"chunk_delay_s must be >= 0 seconds, got {chunk_delay_s}")


class _ProducerLLM:
    """Shared ``complete``/``stream`` for fakes whose replies come from Python (FunctionLLM, ScriptedLLM).

    Subclasses implement ``_produce``; exceptions it raises propagate unchanged (tests inject errors so).
    """

    def __init__(self, *, stream_chunk_size: int | None, chunk_delay_s: float, model: str,
                 sleep: Sleep, clock: Callable[[], float], profile: ModelProfile = HOSTED) -> None:
        _check_chunking(stream_chunk_size, chunk_delay_s)
        self.profile = profile
        """What differs by model (``agents.llm.profile``): the hosted default unless a test sets another."""
        self.stream_chunk_size = stream_chunk_size
        self.chunk_delay_s = chunk_delay_s
        self.model = model
        self._sleep = sleep
        self._clock = clock

    async def _produce(self, request: LLMRequest) -> str | LLMReply:
        raise NotImplementedError

    def _source(self) -> str:
        """Who produced the replies, as messages name it."""
        return f"the {type(self).__name__} script"

    async def complete(self, request: LLMRequest) -> LLMReply:
        """The reply for ``request``: a produced ``LLMReply`` as is, or the text costed with tiktoken."""
        started = self._clock()
        result = await self._produce(request)
        if isinstance(result, LLMReply):
            return result
        if not isinstance(result, str):
            raise FunctionLLMReturnError(f"{self._source()} returned {_shown(result)} for the "
                                   f"{request.role} role; {_MUST_RETURN}", function=self._source(), role=request.role)
        return counted_reply(request, result, model=self.model, latency_s=self._clock() - started)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """Text deltas of ``stream_chunk_size`` characters, then exactly one final ``LLMReply``."""
        reply = await self.complete(request)
        # Closed with this stream (a reader stops at the final reply): left open, the garbage collector's hook
        # would close it later with a cross-thread wake-up of the loop and a task of its own.
        async with contextlib.aclosing(stream_reply(reply, self.stream_chunk_size, chunk_delay_s=self.chunk_delay_s,
                                                    sleep=self._sleep)) as items:
            async for item in items:
                yield item


class FunctionLLM(_ProducerLLM):
    """A chat model whose replies come from ``fn(request) -> str | LLMReply`` (sync or async).

    Picklable with cloudpickle (as Ray ships it to actors) as long as ``fn`` is; this module never
    imports Ray. ``chunk_delay_s`` slows streams down so tests can observe work overlapping a stream.

    Example:
        >>> llm = FunctionLLM(lambda r: {"router": '{"route": "direct"}'}.get(r.role, "ok"))
        >>> llm.model
        'function'
    """

    def __init__(self, fn: ReplyFn, *, stream_chunk_size: int | None = None, chunk_delay_s: float = 0.0,
                 model: str = "function", sleep: Sleep = asyncio.sleep,
                 clock: Callable[[], float] = time.perf_counter, profile: ModelProfile = HOSTED) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionLLM needs a callable fn(request) -> str | LLMReply, "
                            f"got {type(fn).__name__}")
        super().__init__(stream_chunk_size=stream_chunk_size, chunk_delay_s=chunk_delay_s, model=model,
                         sleep=sleep, clock=clock, profile=profile)
        self.fn = fn

    async def _produce(self, request: LLMRequest) -> str | LLMReply:
        # An LLMError the function raises is how tests simulate a failing model: it passes through as it is. Any
        # other exception is a bug in the user's script, reported as theirs (not as tetrarch's internal error).
        try:
            result = self.fn(request)
            if inspect.isawaitable(result):
                result = await result
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: its fault becomes the task's clear failure
            raise FunctionLLMError(
                f"{self._source()} raised {type(exc).__name__}: {exc} (for the {request.role} role); fix it: "
                f"{_MUST_RETURN} (raise an agents.llm.LLMError to simulate a failing model)",
                function=self._source(), role=request.role) from exc
        return result

    def _source(self) -> str:
        return f"the FunctionLLM function {function_name(self.fn)!r}"

    def __repr__(self) -> str:
        name = function_name(self.fn)
        return f"FunctionLLM(fn={name}, stream_chunk_size={self.stream_chunk_size}, model={self.model!r})"


def _shown(value: object) -> str:
    if value is None:
        return "None"
    return f"a {type(value).__name__} ({short_repr(value)})"
