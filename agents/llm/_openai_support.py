"""Pure helpers of ``OpenAIChat``: structured-output payloads, usage, and mapping SDK errors to ``LLMError``.

Kept apart from the client so each rule can be read (and tested) on its own.

Example:
    >>> response_format_for("json_object", None, "router")
    {'type': 'json_object'}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, assert_never

import openai

from agents.llm._openai_stream import field
from agents.llm.base import (
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
    Usage,
)
from prompts import count_message_tokens, count_tokens

__all__ = ["JSON_INSTRUCTION", "MODES", "Mode", "StructuredOutput", "Where", "effective_mode", "field",
           "json_messages", "map_error", "rejected_feature", "response_format_for", "retry_after_s",
           "scrub", "usage_of"]

Mode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
"""Best first: OpenAI's json_schema → llama.cpp's {"type": "json_object", "schema": ...} → plain JSON mode →
only asking for JSON in the prompt."""

JSON_INSTRUCTION = "Reply with one JSON object only."

_MESSAGE_CHARS = 300
_NOT_A_FORMAT_PROBLEM = {401, 403, 404, 408, 409, 429}
"""Statuses that say nothing about response_format (auth, URL, rate limit): never a reason to downgrade."""


def effective_mode(mode: Mode, has_schema: bool) -> Mode:
    """The mode actually sent: schema modes fall back to plain JSON mode for a request without a schema."""
    if not has_schema and mode in ("json_schema", "json_object_schema"):
        return "json_object"
    return mode


def response_format_for(mode: Mode, schema: dict[str, Any] | None, role: str) -> dict[str, Any] | None:
    """The ``response_format`` body field for ``mode`` (``None``: send none)."""
    match effective_mode(mode, schema is not None):
        case "json_schema":
            # strict=False: our schemas are not all strict-mode compatible (optional fields, free dicts).
            return {"type": "json_schema",
                    "json_schema": {"name": f"{role}_reply", "schema": schema, "strict": False}}
        case "json_object_schema":
            return {"type": "json_object", "schema": schema}
        case "json_object":
            return {"type": "json_object"}
        case "prompt":
            return None  # the prompt alone asks for JSON: servers without any response_format support
        case unknown:
            assert_never(unknown)


def json_messages(messages: list[dict[str, Any]], mode: Mode) -> list[dict[str, Any]]:
    """The messages to send: with ``JSON_INSTRUCTION`` appended in prompt mode, and in JSON-object mode when
    no message mentions JSON (OpenAI rejects JSON mode without the word)."""
    mentions_json = any("json" in str(m.get("content", "")).lower() for m in messages)
    if mode == "prompt" or (mode == "json_object" and not mentions_json):
        last = messages[-1] if messages else None
        if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
            # Appended to the last user turn, not as a new turn: some chat templates reject two user turns.
            return [*messages[:-1], {**last, "content": f"{last['content']}\n\n{JSON_INSTRUCTION}"}]
        return [*messages, {"role": "user", "content": JSON_INSTRUCTION}]
    return messages


def usage_of(reported: Any, sent: list[dict[str, Any]], text: str) -> Usage:
    """The server's usage where it reports it; tiktoken counts of the sent messages / the text otherwise."""
    prompt, completion = field(reported, "prompt_tokens"), field(reported, "completion_tokens")
    return Usage(llm_calls=1,
                 input_tokens=prompt if isinstance(prompt, int) else count_message_tokens(sent),
                 output_tokens=completion if isinstance(completion, int) else count_tokens(text))


def _error_text(exc: BaseException) -> str:
    text = str(getattr(exc, "message", "") or exc)
    body = getattr(exc, "body", None)
    if body is not None and not isinstance(body, str):
        text = f"{text} {json.dumps(body, default=str)}"
    return text


def rejected_feature(exc: BaseException, *, has_format: bool, has_stream_options: bool
                     ) -> Literal["response_format", "stream_options"] | None:
    """Which optional request feature an error most likely rejects (``None``: not a rejection).

    llama.cpp answers an unsupported ``json_schema`` with HTTP 500, others with 400/422; older servers
    reject ``stream_options`` with 400."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    status = exc.status_code
    if status in _NOT_A_FORMAT_PROBLEM or status > 500:
        return None
    text = _error_text(exc).lower()
    if has_stream_options and ("stream_options" in text or "include_usage" in text):
        return "stream_options"
    if has_format:
        return "response_format"
    if has_stream_options and status in (400, 422):
        return "stream_options"
    return None


def retry_after_s(exc: BaseException, default: float) -> float:
    """The wait a 429/503 answer asks for (``Retry-After[-ms]``, capped at 120 s), else ``default``."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name)) / divisor
        except (TypeError, ValueError):
            continue
        if 0 <= value <= 120:
            return value
    return default


def scrub(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` (an API key) replaced by ``***``."""
    return text.replace(secret, "***") if len(secret) >= 4 else text


@dataclass(frozen=True, slots=True)
class Where:
    """What an error message says about the call (endpoint, limits) — never the API key."""

    model: str
    base_url: str
    timeout_s: float
    attempts: int


def map_error(exc: BaseException, where: Where, secret: str) -> LLMError:
    """The ``LLMError`` for an SDK (or body-decoding) error, with a message that says what to do."""
    detail = _error_text(exc)
    detail = scrub(detail if len(detail) <= _MESSAGE_CHARS else detail[:_MESSAGE_CHARS] + "…", secret)
    at, tries = f"{where.model!r} at {where.base_url}", f"{where.attempts} attempt(s)"
    error: LLMError
    if isinstance(exc, openai.APITimeoutError):
        error = LLMTimeoutError(f"{at} did not answer within timeout_s={where.timeout_s:g}s ({tries}). Raise "
                                f"timeout_s, or check the server log for slow or stuck requests.")
    elif isinstance(exc, openai.APIConnectionError):
        cause = type(exc.__cause__).__name__ if exc.__cause__ else "connection error"
        error = LLMConnectionError(f"cannot reach {at} ({tries}, {cause}). Check base_url and that the "
                                   f"server is running and listening there.")
    elif isinstance(exc, openai.RateLimitError):
        error = LLMRateLimitError(f"{at} kept rate-limiting ({tries}): {detail}. Lower the concurrency, "
                                  f"raise max_retries, or wait for the quota to reset.")
    elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        error = LLMServerError(f"{at} answered HTTP {exc.status_code} ({tries}): {detail}. "
                               f"Check the server log.")
    elif isinstance(exc, openai.APIStatusError) and exc.status_code in (401, 403):
        error = LLMResponseError(f"{at} refused the credentials (HTTP {exc.status_code}). Pass api_key= or "
                                 f"set OPENAI_API_KEY; local servers usually need none.")
    elif isinstance(exc, openai.APIStatusError) and exc.status_code == 404:
        error = LLMResponseError(f"{at} answered HTTP 404: {detail}. Check base_url (it usually ends in /v1) "
                                 f"and the model name.")
    elif isinstance(exc, openai.APIStatusError):
        error = LLMResponseError(f"{at} rejected the request (HTTP {exc.status_code}): {detail}. Check the "
                                 f"model name, structured_output and extra_body.")
    else:
        error = LLMResponseError(f"{at} sent an unusable response ({type(exc).__name__}: {detail}). Check "
                                 f"the server log; the server may be overloaded or not OpenAI-compatible.")
    return error
