"""Faults the fake OpenAI-compatible server can inject, one request at a time.

A ``Fault`` applies to the next request it matches (optionally only requests whose system prompt holds
``marker``, so a test can target one role) and is used up after ``times`` requests (``None``: forever —
how a server that lacks a feature behaves).

Example:
    >>> Fault.rate_limit(0.2).kind
    'rate_limit'
    >>> Fault.reject_response_format("json_schema").applies_to({"response_format": {"type": "json_schema"}})
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Fault", "FaultKind", "FormatKind", "format_kind"]

FaultKind = Literal["rate_limit", "server_error", "hang", "malformed_body", "truncated_stream",
                    "reject_response_format", "reject_stream_options", "wrong_shape_json", "no_usage",
                    "reject_tools", "malformed_tool_arguments"]
FormatKind = Literal["json_schema", "json_object_schema", "json_object"]


def format_kind(body: dict[str, Any]) -> FormatKind | None:
    """Which structured-output mode a request body asks for (``None``: plain text).

    Example:
        >>> format_kind({"response_format": {"type": "json_object", "schema": {}}})
        'json_object_schema'
    """
    response_format = body.get("response_format")
    if not isinstance(response_format, dict):
        return None
    match response_format.get("type"):
        case "json_schema":
            return "json_schema"
        case "json_object":
            return "json_object_schema" if "schema" in response_format else "json_object"
    return None


def _system_prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", [])
                     if isinstance(m, dict) and m.get("role") == "system")


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected misbehaviour. Build it with the class methods; see each for what the server does."""

    kind: FaultKind
    marker: str | None = None
    """Only requests whose system prompt contains this text (``None``: any request)."""
    times: int | None = 1
    """How many matching requests get this fault; ``None`` for every one."""
    retry_after_s: float = 0.0
    status: int = 500
    seconds: float = 0.0
    after_chunks: int = 0
    format: FormatKind = "json_schema"

    def __post_init__(self) -> None:
        if self.times is not None and self.times < 1:
            raise ValueError(f"Fault.times must be >= 1 or None (every request), got {self.times}")

    @classmethod
    def rate_limit(cls, retry_after_s: float = 0.1, *, marker: str | None = None,
                   times: int | None = 1) -> Fault:
        """HTTP 429 with ``Retry-After: retry_after_s`` (fractional seconds, as the openai SDK accepts)."""
        return cls("rate_limit", marker, times, retry_after_s=retry_after_s)

    @classmethod
    def server_error(cls, status: int = 500, *, marker: str | None = None, times: int | None = 1) -> Fault:
        """An HTTP ``status`` (5xx, or any 4xx) answer with an OpenAI-style error body."""
        return cls("server_error", marker, times, status=status)

    @classmethod
    def hang(cls, seconds: float, *, marker: str | None = None, times: int | None = 1) -> Fault:
        """Answer only after ``seconds`` (beyond the client timeout); stopping the server cuts it short."""
        return cls("hang", marker, times, seconds=seconds)

    @classmethod
    def malformed_body(cls, *, marker: str | None = None, times: int | None = 1) -> Fault:
        """HTTP 200, ``Content-Type: application/json``, and a body that is not JSON."""
        return cls("malformed_body", marker, times)

    @classmethod
    def truncated_stream(cls, after_chunks: int = 1, *, marker: str | None = None,
                         times: int | None = 1) -> Fault:
        """Streaming requests only: send ``after_chunks`` content chunks, then drop the connection (no
        finish_reason, no ``[DONE]``)."""
        return cls("truncated_stream", marker, times, after_chunks=after_chunks)

    @classmethod
    def reject_response_format(cls, kind: FormatKind = "json_schema", *, marker: str | None = None,
                               times: int | None = None) -> Fault:
        """Requests asking for structured output ``kind`` get HTTP 500, as llama.cpp's server answers
        ``json_schema``. Lasts forever by default: a server lacking a feature always lacks it."""
        return cls("reject_response_format", marker, times, format=kind)

    @classmethod
    def reject_stream_options(cls, *, marker: str | None = None, times: int | None = None) -> Fault:
        """Requests carrying ``stream_options`` get HTTP 400 (older compatible servers). Lasts forever."""
        return cls("reject_stream_options", marker, times)

    @classmethod
    def wrong_shape_json(cls, *, marker: str | None = None, times: int | None = 1) -> Fault:
        """A normal answer whose content is valid JSON of the wrong schema."""
        return cls("wrong_shape_json", marker, times)

    @classmethod
    def no_usage(cls, *, marker: str | None = None, times: int | None = 1) -> Fault:
        """A normal answer without ``usage`` (also no usage chunk when streaming)."""
        return cls("no_usage", marker, times)

    @classmethod
    def reject_tools(cls, *, marker: str | None = None, times: int | None = None) -> Fault:
        """Requests carrying ``tools`` get HTTP 400 (a server or model without function calling). Lasts forever."""
        return cls("reject_tools", marker, times)

    @classmethod
    def malformed_tool_arguments(cls, *, marker: str | None = None, times: int | None = 1) -> Fault:
        """The responder's tool calls go out with their arguments' JSON cut short (not parseable)."""
        return cls("malformed_tool_arguments", marker, times)

    def applies_to(self, body: dict[str, Any]) -> bool:
        """Whether this fault fits the request ``body`` (marker, and the request kind the fault needs)."""
        if self.marker is not None and self.marker not in _system_prompt(body):
            return False
        match self.kind:
            case "truncated_stream":
                return bool(body.get("stream"))
            case "reject_response_format":
                return format_kind(body) == self.format
            case "reject_stream_options":
                return "stream_options" in body
            case "reject_tools" | "malformed_tool_arguments":
                return bool(body.get("tools"))
        return True
