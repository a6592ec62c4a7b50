"""OpenAIChat: the LLM protocol over any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp, Ollama).

Built on ``openai.AsyncOpenAI``. Transient failures (429 honouring Retry-After, 5xx, timeouts, dropped
connections) are retried by the SDK's own backoff, ``max_retries`` times; what is left becomes one of the
``LLMError`` classes with a message that says what to check.

Structured output (``response_format == "json"``) uses the best mode the server accepts: OpenAI's
``json_schema`` → llama.cpp's ``{"type": "json_object", "schema": ...}`` → ``{"type": "json_object"}`` → a
one-line instruction in the prompt. ``structured_output="auto"`` finds that mode on the first JSON request
(a rejected mode is tried once, without retries, then the next) and remembers it; a configured mode never
changes. Streams ask for ``stream_options.include_usage`` and stop asking if the server rejects it. When
the server reports no usage, tokens are counted with tiktoken.

Credentials: the API key (``api_key``, else ``OPENAI_API_KEY``, else the placeholder ``"not-needed"`` that
local servers ignore) lives only in a private attribute. ``repr``/``str`` mask it, error messages are
scrubbed of it, and requests, replies and ``LLMCallRecord``s never carry it — so events and checkpoints
never include it. Pickling (Ray ships the object to actors) keeps the key but drops the HTTP client,
which is recreated lazily in the worker, once per event loop.

Example:
    >>> llm = OpenAIChat("qwen2.5", base_url="http://127.0.0.1:8000/v1", api_key="sk-secret")
    >>> "sk-secret" in repr(llm)
    False
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, get_args

import openai

from agents.llm._openai_support import (
    MODES,
    Mode,
    StructuredOutput,
    Where,
    effective_mode,
    field,
    json_messages,
    map_error,
    rejected_feature,
    response_format_for,
    retry_after_s,
    usage_of,
)
from agents.llm._openai_stream import StreamState, wants_tool_arguments
from agents.llm._tool_calls import RawToolCall, calls_in_text, tool_names
from agents.llm._tool_use import finish_tool_reply, tools_rejected, tools_unsupported
from agents.llm.profile import HOSTED, ModelProfile
from agents.llm.base import (
    LLMError,
    LLMReply,
    LLMRequest,
    LLMResponseError,
    LLMStreamTruncated,
    LLMTimeoutError,
    Usage,
)

__all__ = ["OpenAIChat", "StructuredOutput"]

_SDK_ERRORS = (openai.OpenAIError, json.JSONDecodeError, UnicodeDecodeError)
"""What a call can raise: SDK errors, and decoding errors for a 200 answer whose body is not JSON."""
_FIRST_RETRY_DELAY_S = 0.5  # the SDK's own initial backoff, used after a failed probe


@dataclass(frozen=True, slots=True)
class _Attempt:
    """What one HTTP request asks of the server."""

    mode: Mode | None
    """Structured-output mode sent (``None``: a text request)."""
    stream_options: bool
    dropped_stream_options: bool = False


def _retried_by_sdk(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code in (408, 409, 429)
                                                       or exc.status_code >= 500)


class OpenAIChat:
    """A chat model behind an OpenAI-compatible HTTP API. See the module docstring for retries, structured
    output and credentials.

    Example:
        >>> OpenAIChat("gpt-4o-mini", structured_output="json_schema").mode
        'json_schema'
    """

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 3, structured_output: StructuredOutput = "auto",
                 extra_body: dict[str, Any] | None = None, *, profile: ModelProfile = HOSTED,
                 clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        if not model:
            raise ValueError("OpenAIChat needs a model name, e.g. OpenAIChat('gpt-4o-mini') or an alias")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0 (0 disables retries), got {max_retries}")
        if structured_output not in get_args(StructuredOutput):
            raise ValueError(f"structured_output must be one of {get_args(StructuredOutput)}, "
                             f"got {structured_output!r}")
        self.model = model
        self.base_url = base_url
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.structured_output: StructuredOutput = structured_output
        self.extra_body = dict(extra_body or {})
        self.profile = profile
        """What differs by model (``agents.llm.profile``): prompts, reply forms, concurrency, grammars (sent as
        the body's ``grammar`` field only when ``profile.grammar``: OpenAI's API rejects fields it does not know),
        strategies. The hosted default unless given."""
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._clock = clock
        self._sleep = sleep
        self._floor = 0 if structured_output == "auto" else MODES.index(structured_output)
        self._confirmed: set[Mode] = set()
        self._stream_usage: bool | None = None
        """Whether the server accepts ``stream_options`` (``None``: not known yet)."""
        self._tools_supported: bool | None = None
        """``False`` once the server rejected ``tools``: later tool requests fail at once, without a round trip."""
        self._clients: dict[int, openai.AsyncOpenAI] = {}
        self._loop_ref: weakref.ref[asyncio.AbstractEventLoop] | None = None

    # ------------------------------------------------------------------ identity, pickling
    @property
    def mode(self) -> Mode | None:
        """The structured-output mode in use; ``None`` while ``auto`` has not found a working one yet."""
        if self.structured_output != "auto":
            return self.structured_output
        candidate = MODES[self._floor]
        return candidate if candidate in self._confirmed or candidate == "prompt" else None

    @property
    def tools_supported(self) -> bool | None:
        """Whether the server took a request with ``tools`` (``None``: none sent yet). ``False`` is remembered: the
        typed reviewer then asks for its output in the prompt without trying tools again."""
        return self._tools_supported

    def __repr__(self) -> str:
        return (f"OpenAIChat(model={self.model!r}, base_url={self.base_url!r}, api_key='***', "
                f"timeout_s={self.timeout_s:g}, max_retries={self.max_retries}, "
                f"structured_output={self.structured_output!r})")

    __str__ = __repr__

    def __getstate__(self) -> dict[str, Any]:
        # The HTTP client (sockets, the loop it belongs to) never travels; the key does, privately.
        state = dict(self.__dict__)
        state["_clients"], state["_loop_ref"] = {}, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _client(self, max_retries: int) -> openai.AsyncOpenAI:
        """The SDK client for the running event loop (pooled connections are tied to one loop)."""
        loop = asyncio.get_running_loop()
        if self._loop_ref is None or self._loop_ref() is not loop:
            self._clients, self._loop_ref = {}, weakref.ref(loop)
        root = self._clients.get(self.max_retries)
        if root is None:
            root = openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                      timeout=self.timeout_s, max_retries=self.max_retries)
            self._clients[self.max_retries] = root
        client = self._clients.get(max_retries)
        if client is None:  # a copy with fewer retries shares the root's connection pool
            client = self._clients[max_retries] = root.with_options(max_retries=max_retries)
        return client

    async def aclose(self) -> None:
        """Close the HTTP connections opened on the running event loop."""
        root = self._clients.get(self.max_retries)
        self._clients, self._loop_ref = {}, None
        if root is not None:
            await root.close()

    def _where(self, attempts: int) -> Where:
        endpoint = self.base_url or os.environ.get("OPENAI_BASE_URL") or "the OpenAI API"
        return Where(self.model, endpoint, self.timeout_s, attempts)

    # ------------------------------------------------------------------ sending, with mode detection
    def _first_attempt(self, request: LLMRequest, stream: bool) -> _Attempt:
        mode = None
        if request.response_format == "json":
            mode = effective_mode(MODES[self._floor], request.json_schema is not None)
        return _Attempt(mode, stream and self._stream_usage is not False)

    def _probing_format(self, attempt: _Attempt) -> bool:
        return (self.structured_output == "auto" and attempt.mode not in (None, "prompt")
                and attempt.mode not in self._confirmed)

    def _is_probe(self, attempt: _Attempt) -> bool:
        return self._probing_format(attempt) or (attempt.stream_options and self._stream_usage is None)

    def _params(self, request: LLMRequest, attempt: _Attempt, stream: bool) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "temperature": request.temperature,
                                  "messages": json_messages(request.messages, attempt.mode) if attempt.mode
                                  else request.messages}
        if request.max_tokens is not None:
            params["max_tokens"] = request.max_tokens
        if request.tools:
            params["tools"] = request.tools
            if request.tool_choice is not None:
                params["tool_choice"] = request.tool_choice
            if request.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = request.parallel_tool_calls
        response_format = None
        if attempt.mode is not None:
            response_format = response_format_for(attempt.mode, request.json_schema, request.role)
        if response_format is not None:
            params["response_format"] = response_format
        if stream:
            params["stream"] = True
            if attempt.stream_options:
                params["stream_options"] = {"include_usage": True}
        extra = dict(self.extra_body)
        if self.profile.grammar and request.grammar is not None and attempt.mode is None:
            extra["grammar"] = request.grammar  # llama.cpp's server; OpenAI itself rejects unknown fields
        if extra:
            params["extra_body"] = extra
        return params

    def _after_failure(self, exc: BaseException, request: LLMRequest, attempt: _Attempt, probing: bool,
                       budget: int, tries: int) -> tuple[_Attempt, bool, int, float] | LLMError:
        """The next (attempt, probing, retry budget, delay) after a failed request, or the error to raise."""
        if request.tools and tools_rejected(exc):
            self._tools_supported = False  # a server without function calling never grows it: fail fast from now on
            return tools_unsupported(exc, self._where(tries), self._api_key)
        if probing:
            options_unknown = attempt.stream_options and self._stream_usage is None
            feature = rejected_feature(exc, has_format=self._probing_format(attempt),
                                       has_stream_options=options_unknown)
            if feature == "stream_options":
                nxt = replace(attempt, stream_options=False, dropped_stream_options=True)
                return nxt, self._is_probe(nxt), budget, 0.0
            if feature == "response_format" and attempt.mode is not None:
                self._floor = max(self._floor, MODES.index(attempt.mode) + 1)
                has_schema = request.json_schema is not None
                nxt = replace(attempt, mode=effective_mode(MODES[self._floor], has_schema))
                return nxt, self._is_probe(nxt), budget, 0.0
            if _retried_by_sdk(exc) and budget > 0:
                # A transient failure of a probe says nothing about the features: retry the same request
                # with the SDK's backoff and the retries left.
                return attempt, False, budget - 1, retry_after_s(exc, _FIRST_RETRY_DELAY_S)
        used = budget if (_retried_by_sdk(exc) and not probing) else 0
        return map_error(exc, self._where(tries + used), self._api_key)

    def _learn(self, attempt: _Attempt, stream: bool) -> None:
        if attempt.mode is not None:
            self._confirmed.add(attempt.mode)
        if stream and attempt.stream_options:
            self._stream_usage = True
        elif stream and attempt.dropped_stream_options:
            self._stream_usage = False

    async def _send(self, request: LLMRequest, *, stream: bool) -> tuple[Any, list[dict[str, Any]]]:
        """The SDK's result for ``request`` (a completion, or an open stream) and the messages sent."""
        if request.tools and self._tools_supported is False:
            raise tools_unsupported(None, self._where(0), self._api_key)
        attempt = self._first_attempt(request, stream)
        probing, budget, tries = self._is_probe(attempt), self.max_retries, 0
        while True:
            params = self._params(request, attempt, stream)
            tries += 1
            try:
                result = await self._client(0 if probing else budget).chat.completions.create(**params)
            except _SDK_ERRORS as exc:
                outcome = self._after_failure(exc, request, attempt, probing, budget, tries)
            else:
                self._learn(attempt, stream)
                if request.tools:
                    self._tools_supported = True
                return result, params["messages"]
            # Raised here, outside the except block, so the SDK error (whose request object holds the
            # Authorization header) is not chained onto ours.
            if isinstance(outcome, LLMError):
                raise outcome
            attempt, probing, budget, delay = outcome
            if delay > 0:
                await self._sleep(delay)

    # ------------------------------------------------------------------ the LLM protocol
    async def complete(self, request: LLMRequest) -> LLMReply:
        """One non-streaming chat completion; with ``request.tools``, the reply's ``tool_calls`` hold the calls
        (malformed arguments: one repair round, then ``LLMToolCallError``).

        Example:
            >>> # reply = await llm.complete(LLMRequest(role="router", messages=msgs))
        """
        started = self._clock()
        text, raw, usage, model = await self._complete_raw(request)
        return await finish_tool_reply(self._complete_raw, request, text, raw, usage, model=model,
                                       latency=lambda: self._clock() - started)

    async def _complete_raw(self, request: LLMRequest) -> tuple[str, list[RawToolCall], Usage, str]:
        """(text, tool calls as sent, usage, model) of one non-streaming completion."""
        completion, sent = await self._send(request, stream=False)
        choices = field(completion, "choices")
        if isinstance(completion, str) or not choices:
            raise LLMResponseError(f"{self.model!r} at {self._where(1).base_url} answered without choices; "
                                   f"the server may not be OpenAI-compatible, or it failed (check its log)")
        message = field(choices[0], "message")
        text = field(message, "content")
        raw = [RawToolCall(field(c, "id") or f"call_{i}", field(field(c, "function"), "name") or "",
                           field(field(c, "function"), "arguments") or "")
               for i, c in enumerate(field(message, "tool_calls") or [])]
        if not isinstance(text, str) and raw:
            text = ""
        if not isinstance(text, str):
            refusal = field(message, "refusal")
            finish = field(choices[0], "finish_reason")
            raise LLMResponseError(f"{self.model!r} refused: {refusal}" if refusal else
                                   f"{self.model!r} answered with no text content (finish_reason="
                                   f"{finish!r}); check max_tokens and the prompt")
        if request.tools and not raw:
            text, raw = calls_in_text(text, offered=tool_names(request.tools))
        usage = usage_of(field(completion, "usage"), sent, text)
        return text, raw, usage, field(completion, "model") or self.model

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """Text deltas as the server streams them, then exactly one final ``LLMReply``. A request with ``tools``
        tagged ``STREAM_TOOL_ARGUMENTS`` in its metadata also gets each call's argument pieces as they come
        (``ToolArgumentsDelta``, ``agents.llm._openai_stream``); untagged, the deltas add up to the reply's text.

        A stream that ends without a finish_reason raises ``LLMStreamTruncated`` (an ``LLMResponseError``);
        the request can simply be sent again.
        """
        started = self._clock()
        response, sent = await self._send(request, stream=True)
        state = StreamState(
            parts=[], tool_arguments=bool(request.tools) and wants_tool_arguments(request.metadata))
        error: LLMError | None = None
        try:
            async for chunk in response:
                for delta in state.feed(chunk):
                    yield delta
        except _SDK_ERRORS as exc:
            error = self._stream_error(exc, state)
        finally:
            await response.close()
        text = "".join(state.parts)
        if error is None and not state.finished:
            error = self._truncated(state, "the stream ended")
        if error is not None:
            raise error
        raw = state.calls.raw()
        if request.tools and not raw:
            text, raw = calls_in_text(text, offered=tool_names(request.tools))
        yield await finish_tool_reply(self._complete_raw, request, text, raw, usage_of(state.usage, sent, text),
                                      model=state.model or self.model, latency=lambda: self._clock() - started)

    def _truncated(self, state: StreamState, how: str) -> LLMStreamTruncated:
        return LLMStreamTruncated(
            f"stream truncated: {how} after {len(''.join(state.parts))} characters from {self.model!r} at "
            f"{self._where(1).base_url}, without a finish_reason or [DONE]. Send the request again; if it "
            f"keeps happening, check the server log (crashes, proxies cutting long responses).")

    def _stream_error(self, exc: BaseException, state: StreamState) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeoutError(f"the stream from {self.model!r} at {self._where(1).base_url} stalled for "
                                   f"more than timeout_s={self.timeout_s:g}s. Raise timeout_s, or check the "
                                   f"server log.")
        if isinstance(exc, openai.APIConnectionError):
            return self._truncated(state, "the connection dropped")
        return map_error(exc, self._where(1), self._api_key)
