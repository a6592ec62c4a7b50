"""FakeOpenAIServer: a real OpenAI-compatible HTTP server on 127.0.0.1 for tests, with fault injection.

Tests talk to it through the real ``openai`` SDK over real sockets — never a mock of the SDK — so
retries, timeouts, SSE parsing and error mapping are exercised for real. Standard library only.

- ``POST /v1/chat/completions``: JSON, or SSE (``data: {...}`` chunks, then ``data: [DONE]``; usage in a
  last chunk when ``stream_options.include_usage``). The reply text comes from ``responder(body)``
  (default: echo the last user message).
- ``GET /v1/models``: the one model ``model``.
- Tool calls: a responder may return a ``FakeReply`` with ``FakeToolCall``s; the server answers them as OpenAI
  does (``message.tool_calls``, ``finish_reason: "tool_calls"``; streamed as ``delta.tool_calls`` pieces by index,
  arguments cut into ``stream_chunk_chars`` pieces). ``Fault.reject_tools()`` plays a server without function
  calling, ``Fault.malformed_tool_arguments()`` one that cuts the arguments' JSON short.
- ``inject(Fault...)``: 429 with Retry-After, 5xx, hangs, malformed bodies, truncated streams, rejected
  structured-output modes, wrong-shape JSON, missing usage (see ``Fault``).
- ``received`` / ``requests``: every request (body, headers, arrival time) for assertions.

Usage is counted with a whitespace "tokenizer" (``word_usage``), deliberately unlike tiktoken, so a test
can tell server-reported usage from a client's own count.

Example:
    >>> with FakeOpenAIServer(responder=lambda body: "hi") as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True

Run it as a process: ``python -m agents.llm.fake_server --port 0`` prints its base URL.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from agents.llm._fake_faults import Fault, FaultKind, FormatKind, format_kind
from agents.llm._fake_tools import FakeReply, FakeToolCall, stream_tool_chunks, tool_message

__all__ = ["FakeOpenAIServer", "FakeReply", "FakeToolCall", "Fault", "FaultKind", "FormatKind", "ReceivedRequest",
           "echo_responder", "format_kind", "word_usage"]

Responder = Callable[[dict[str, Any]], "str | FakeReply"]

WRONG_SHAPE_JSON = '{"unexpected": "shape", "items": [1, 2, 3]}'
MALFORMED_BODY = b'{"id": "chatcmpl-broken", "choices": [{"message": '


def echo_responder(body: dict[str, Any]) -> str:
    """The content of the last user message (the default reply).

    Example:
        >>> echo_responder({"messages": [{"role": "user", "content": "ping"}]})
        'ping'
    """
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def word_usage(body: dict[str, Any], text: str) -> dict[str, int]:
    """The usage this server reports: whitespace-separated words of the prompt and of the reply.

    Example:
        >>> word_usage({"messages": [{"role": "user", "content": "a b"}]}, "c")
        {'prompt_tokens': 2, 'completion_tokens': 1, 'total_tokens': 3}
    """
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion = len(text.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    """Lower-cased header names."""
    at: float
    """``time.monotonic()`` on arrival."""


def _completion(body: dict[str, Any], reply: FakeReply, usage: dict[str, int] | None) -> dict[str, Any]:
    message = tool_message(reply)
    out: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
    }
    if usage is not None:
        out["usage"] = usage
    return out


def _chunk(body: dict[str, Any], delta: dict[str, Any] | None, finish: str | None = None,
           usage: dict[str, int] | None = None) -> bytes:
    payload: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                               "created": int(time.time()), "model": body.get("model", "fake"),
                               "choices": [] if delta is None else
                               [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        payload["usage"] = usage
    return f"data: {json.dumps(payload)}\n\n".encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer
    # HTTP/1.0: one request per connection, and an SSE body simply ends when the socket closes — so a
    # truncated stream is a clean EOF without [DONE], exactly what a dying server looks like.
    protocol_version = "HTTP/1.0"

    def log_message(self, *args: object) -> None:  # tests read .received, not stderr
        pass

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, param: str | None = None,
               headers: dict[str, str] | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": param, "code": status}},
                        headers)

    def do_GET(self) -> None:
        self.server.owner._record("GET", self.path, {}, self.headers)
        if self.path.rstrip("/") == "/v1/models":
            model = self.server.owner.model
            self._send_json(200, {"object": "list", "data": [
                {"id": model, "object": "model", "created": 0, "owned_by": "fake"}]})
        else:
            self._error(404, f"no route GET {self.path}", "not_found")

    def do_POST(self) -> None:
        try:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw or b"{}")
        except (ValueError, json.JSONDecodeError):
            self._error(400, "request body is not JSON", "invalid_request_error")
            return
        owner = self.server.owner
        owner._record("POST", self.path, body, self.headers)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route POST {self.path}", "not_found")
            return
        # The client may have given up (timeout) while we hung: then there is nobody to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer(body, owner._take_fault(body))

    def _answer(self, body: dict[str, Any], fault: Fault | None) -> None:
        kind = fault.kind if fault else None
        match kind:
            case "rate_limit":
                assert fault is not None
                self._error(429, "Rate limit reached; retry later.", "rate_limit_exceeded",
                            headers={"Retry-After": f"{fault.retry_after_s:g}"})
                return
            case "server_error":
                assert fault is not None
                self._error(fault.status, f"injected server error {fault.status}", "server_error")
                return
            case "reject_response_format":
                self._error(500, f"response_format type {format_kind(body)!r} is not supported: failed to "
                                 "convert the JSON schema to a grammar", "server_error", "response_format")
                return
            case "reject_stream_options":
                self._error(400, "Unrecognized request argument supplied: stream_options",
                            "invalid_request_error", "stream_options")
                return
            case "reject_tools":
                self._error(400, "tools are not supported by this model", "invalid_request_error", "tools")
                return
            case "malformed_body":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(MALFORMED_BODY)
                return
            case "hang":
                assert fault is not None
                self.server.owner._stopping.wait(fault.seconds)
        owner = self.server.owner
        answer = WRONG_SHAPE_JSON if kind == "wrong_shape_json" else owner.responder(body)
        reply = answer if isinstance(answer, FakeReply) else FakeReply(answer)
        if kind == "malformed_tool_arguments":
            reply = reply.malformed()
        usage = None if kind == "no_usage" else word_usage(body, reply.counted_text())
        if body.get("stream"):
            cut_after = fault.after_chunks if fault is not None and kind == "truncated_stream" else None
            self._stream(body, reply, usage, cut_after=cut_after)
        else:
            self._send_json(200, _completion(body, reply, usage))

    def _stream(self, body: dict[str, Any], reply: FakeReply, usage: dict[str, int] | None,
                cut_after: int | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        size = self.server.owner.stream_chunk_chars
        text = reply.content or ""
        pieces = [text[i:i + size] for i in range(0, len(text), size)] or ([] if reply.tool_calls else [""])
        deltas: list[dict[str, Any]] = [{"content": piece} for piece in pieces]
        deltas += stream_tool_chunks(reply, size)
        deltas[0] = {"role": "assistant", **deltas[0]}
        for index, delta in enumerate(deltas):
            if cut_after is not None and index >= cut_after:
                self.wfile.flush()
                return  # HTTP/1.0: returning closes the connection mid-stream
            self.wfile.write(_chunk(body, delta))
            self.wfile.flush()
        if cut_after is not None:
            return
        self.wfile.write(_chunk(body, {}, finish="tool_calls" if reply.tool_calls else "stop"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if include_usage and usage is not None:
            self.wfile.write(_chunk(body, None, usage=usage))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeOpenAIServer


class FakeOpenAIServer:
    """An OpenAI-compatible chat server on ``127.0.0.1:port`` (0: a free port) in a daemon thread.

    Example:
        >>> server = FakeOpenAIServer().start()
        >>> server.inject(Fault.server_error(503))
        >>> server.stop()
    """

    def __init__(self, responder: Responder = echo_responder, *, port: int = 0, model: str = "fake-model",
                 stream_chunk_chars: int = 4) -> None:
        if stream_chunk_chars < 1:
            raise ValueError(f"stream_chunk_chars must be >= 1, got {stream_chunk_chars}")
        self.responder = responder
        self.model = model
        self.stream_chunk_chars = stream_chunk_chars
        self._port = port
        self._lock = threading.Lock()
        self._faults: list[list[Any]] = []  # [Fault, remaining uses or None]
        self._received: list[ReceivedRequest] = []
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns ``self``."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        # A short poll interval: stop() (shutdown) waits for the serving loop to notice, up to one interval.
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; hanging answers are cut short."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running; call start() or use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — pass it as an OpenAI client's ``base_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ faults and records
    def inject(self, *faults: Fault) -> None:
        """Queue faults; each request gets the first queued fault that applies to it."""
        with self._lock:
            self._faults.extend([fault, fault.times] for fault in faults)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending_faults(self) -> list[Fault]:
        with self._lock:
            return [entry[0] for entry in self._faults]

    def _take_fault(self, body: dict[str, Any]) -> Fault | None:
        with self._lock:
            for entry in self._faults:
                fault, left = entry
                if fault.applies_to(body):
                    if left is not None:
                        entry[1] = left - 1
                        if entry[1] == 0:
                            self._faults.remove(entry)
                    return fault
        return None

    def _record(self, method: str, path: str, body: dict[str, Any], headers: Any) -> None:
        lowered = {k.lower(): v for k, v in headers.items()}
        request = ReceivedRequest(method, path, body, lowered, time.monotonic())
        with self._lock:
            self._received.append(request)

    @property
    def received(self) -> list[ReceivedRequest]:
        """Every request so far, in arrival order."""
        with self._lock:
            return list(self._received)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of every chat-completion request so far (retries included)."""
        return [r.body for r in self.received if r.method == "POST"]


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.llm.fake_server [--port N]``: serve until interrupted; prints the base URL."""
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible chat server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one (default)")
    parser.add_argument("--model", default="fake-model", help="model id reported by GET /v1/models")
    args = parser.parse_args(argv)
    with FakeOpenAIServer(port=args.port, model=args.model) as server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
