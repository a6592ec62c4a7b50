"""Run one tool call: validate, check permission and the idempotency journal, apply the timeout,
classify failures, retry transient ones with exponential backoff and full jitter, bound the output."""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from agents.idempotency import ClaimingJournal, ClaimState, Fence, IdempotencyJournal
from agents.memory.doc_search import user_documents
from agents.tools.decorator import Tool
from agents.tools.errors import (
    PermanentToolError,
    ToolArgumentError,
    ToolError,
    ToolPermissionError,
    ToolTimeoutError,
    TransientToolError,
)
from agents.tools.output import UnserializableOutputError, serialize_output, truncate_output
from agents.tools.registry import ToolRegistry
from planning.validate import omit_null_optionals

__all__ = ["LeaseLostToolError", "ToolCallResult", "ToolDispatcher", "backoff_delay", "classify_exception"]

_HELD_POLL_S = (0.02, 0.5)
"""First and largest pause between claims of a key another call holds (doubling in between)."""


class LeaseLostToolError(PermanentToolError):
    """The step's runner no longer owns its task (another runner took it over): the side effect was not run."""


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    output: Any
    attempts: int
    truncated: bool
    duration_s: float
    from_journal: bool


def classify_exception(exc: BaseException, tool_name: str) -> ToolError:
    """Map whatever a tool raised onto the error tree. HTTP-ish errors (a ``status_code``/``status`` of
    429 or ≥ 500), timeouts and connection errors are transient; anything else unknown is permanent,
    because blindly retrying a bug wastes the budget."""
    if isinstance(exc, _ToolExited):
        return PermanentToolError(f"tool {tool_name!r} {exc.what}; a tool must return a value or raise an "
                                  "exception, not end or interrupt the process it runs in", tool_name=tool_name)
    if isinstance(exc, ToolError):
        if exc.tool_name is None:
            exc.tool_name = tool_name
        return exc
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return ToolTimeoutError(f"tool {tool_name!r} timed out: {exc or 'no reply'}", tool_name=tool_name)
    status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    if isinstance(exc, ConnectionError) or (isinstance(status, int) and (status == 429 or status >= 500)):
        retry_after = getattr(exc, "retry_after", None)
        return TransientToolError(f"tool {tool_name!r} failed transiently ({type(exc).__name__}: {exc})",
                                  tool_name=tool_name,
                                  retry_after=float(retry_after) if isinstance(retry_after, (int, float)) else None)
    return PermanentToolError(f"tool {tool_name!r} raised {type(exc).__name__}: {exc}", tool_name=tool_name)


class _ToolExited(Exception):
    """A tool raised SystemExit or KeyboardInterrupt. Neither may travel as it is: an asyncio task re-raises them
    out of the event loop, which stopped the executor actor's loop for good (Ray neither finished the step nor
    restarted the process) and killed the in-process runtime's thread, so they are turned into an ordinary
    exception right where the tool raised them."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what

    @classmethod
    def of(cls, exc: SystemExit | KeyboardInterrupt) -> _ToolExited:
        return cls(f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else
                   f"raised {type(exc).__name__}")


def _guarded_sync(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return fn(**kwargs)
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _ToolExited.of(exc) from None


async def _guarded(call: Awaitable[Any]) -> Any:
    try:
        return await call
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _ToolExited.of(exc) from None


_INLINE_OUTPUT_BYTES = 64 * 1024
"""Shallow size under which an output is serialised and cut on the event loop (a container's elements are not
counted, but a container of many elements is large itself, and long strings are cut before counting)."""


def _bounded(raw: Any, max_tokens: int) -> tuple[Any, bool]:
    return truncate_output(serialize_output(raw), max_tokens)


def backoff_delay(attempt: int, base_s: float, max_s: float, rng: random.Random) -> float:
    """Full jitter (AWS architecture blog): uniform in [0, min(max, base·2^(attempt-1))]. Spreads the
    retries of many parallel steps hitting the same rate-limited API."""
    return rng.uniform(0.0, min(max_s, base_s * (2 ** (attempt - 1))))


class ToolDispatcher:
    """Calls tools from a registry with the runtime's policies.

    >>> import asyncio
    >>> from agents.tools import tool
    >>> @tool
    ... def double(x: int) -> int:
    ...     '''Twice x.
    ...
    ...     Args:
    ...         x: A number.
    ...     '''
    ...     return 2 * x
    >>> asyncio.run(ToolDispatcher(ToolRegistry([double])).call("double", {"x": 4})).output
    8
    """

    def __init__(self, registry: ToolRegistry, *, max_attempts: int = 3, backoff_s: float = 0.2,
                 backoff_max_s: float = 5.0, max_output_tokens: int = 2000,
                 journal: IdempotencyJournal | None = None, documents_path: str | os.PathLike[str] | None = None,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, rng: random.Random | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._registry = registry
        self._max_attempts = max_attempts
        self._backoff_s = backoff_s
        self._backoff_max_s = backoff_max_s
        self._max_output_tokens = max_output_tokens
        self._journal = journal
        self._documents_path = documents_path
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock

    @property
    def registry(self) -> ToolRegistry:
        return self._registry

    async def call(self, name: str, args: Mapping[str, Any], *, idempotency_key: str | None = None,
                   timeout_s: float | None = None, confirmed: bool = False,
                   fence: Fence | None = None) -> ToolCallResult:
        """Run ``name`` with ``args``. Raises a ToolError subclass; transient ones only after
        ``max_attempts`` (their ``.attempts`` says how many ran). With a ``fence`` and a claiming journal, a
        non-idempotent call claims its key before running (see ``agents.idempotency.ClaimingJournal``)."""
        started = self._clock()
        target = self._registry.get(name)
        spec = target.spec
        if spec.requires_confirmation and not confirmed:
            raise ToolPermissionError(
                f"tool {name!r} ({spec.permission}) requires a human's confirmation before it runs; the task "
                "escalates and continues after orch.respond(task_id, 'approve')", tool_name=name)
        # null for an optional parameter means "not given", as the plan's validation read it
        kwargs = target.validate_arguments(omit_null_optionals(args, spec.parameters))
        if spec.key_param is not None and idempotency_key is not None:
            kwargs[spec.key_param] = idempotency_key
        journaled = not spec.idempotent and self._journal is not None and idempotency_key is not None
        claiming = journaled and fence is not None and isinstance(self._journal, ClaimingJournal)
        if claiming:
            found = await self._claim(name, idempotency_key, fence)  # type: ignore[arg-type]
            if found is not None:
                return ToolCallResult(found, 0, False, self._clock() - started, True)
        elif journaled:
            entry = await self._journal.get(idempotency_key)  # type: ignore[union-attr,arg-type]
            if entry is not None:
                return ToolCallResult(entry.output, 0, False, self._clock() - started, True)
        timeout = timeout_s if timeout_s is not None else spec.timeout_s
        if spec.timeout_s is not None and timeout_s is not None:
            timeout = min(timeout_s, spec.timeout_s)
        raw, attempts = await self._run_with_retries(target, kwargs, timeout)
        # A huge output takes a while to serialise and cut: in a thread, so the executor's event loop serves
        # every other step meanwhile. A small one inline (a thread hop per step would cost every step).
        try:
            if sys.getsizeof(raw) < _INLINE_OUTPUT_BYTES:
                output, truncated = _bounded(raw, self._max_output_tokens)
            else:
                output, truncated = await asyncio.to_thread(_bounded, raw, self._max_output_tokens)
        except UnserializableOutputError as exc:
            raise PermanentToolError(f"tool {name!r} {exc}", tool_name=name, attempts=attempts) from None
        if claiming:
            await self._journal.record(idempotency_key, fence, output)  # type: ignore[union-attr,arg-type]
        elif journaled:
            await self._journal.put(idempotency_key, output)  # type: ignore[union-attr,arg-type]
        return ToolCallResult(output, attempts, truncated, self._clock() - started, False)

    async def _claim(self, name: str, key: str, fence: Fence) -> Any:
        """Claim ``key``: None when this call now holds it, or the recorded output of the call that ran it.
        Waits while another live call holds it (the caller's step timeout bounds the wait)."""
        journal: ClaimingJournal = self._journal  # type: ignore[assignment]
        pause = _HELD_POLL_S[0]
        while True:
            reply = await journal.claim(key, fence)
            match reply.state:
                case ClaimState.CLAIMED:
                    return None
                case ClaimState.RECORDED:
                    return reply.output
                case ClaimState.LEASE_LOST:
                    raise LeaseLostToolError(f"tool {name!r} was not run: {reply.detail}; another runner owns the "
                                             "task now", tool_name=name)
                case ClaimState.HELD:
                    await self._sleep(pause)
                    pause = min(pause * 2, _HELD_POLL_S[1])
                case _:
                    assert_never(reply.state)

    async def _run_with_retries(self, target: Tool, kwargs: dict[str, Any], timeout: float | None) -> tuple[Any, int]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._run_once(target, kwargs, timeout), attempt
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below; nothing escapes unclassified
                error = classify_exception(exc, target.name)
            error.attempts = attempt
            if isinstance(error, ToolArgumentError) or not isinstance(error, TransientToolError):
                raise error
            if attempt >= self._max_attempts:
                error.message = f"{error.message} (gave up after {attempt} attempts)"
                error.args = (error.message,)
                raise error
            delay = backoff_delay(attempt, self._backoff_s, self._backoff_max_s, self._rng)
            if error.retry_after is not None:
                delay = max(delay, min(error.retry_after, self._backoff_max_s))
            await self._sleep(delay)

    async def _run_once(self, target: Tool, kwargs: dict[str, Any], timeout: float | None) -> Any:
        # The call's own configuration, not the process's: two dispatchers (two Orchestrators' executors in one
        # process) each give their calls their own documents. A context variable reaches an async tool in this
        # task and a sync one in the thread asyncio.to_thread runs it in (which copies the context).
        with user_documents(self._documents_path):
            return await self._call_tool(target, kwargs, timeout)

    async def _call_tool(self, target: Tool, kwargs: dict[str, Any], timeout: float | None) -> Any:
        call = _guarded(target.fn(**kwargs)) if target.is_async else asyncio.to_thread(_guarded_sync, target.fn, kwargs)
        if timeout is None:
            return await call
        try:
            async with asyncio.timeout(timeout):  # in the caller's task: wait_for would start one per call
                return await call
        except TimeoutError:
            raise ToolTimeoutError(f"tool {target.name!r} did not return within {timeout:g}s",
                                   tool_name=target.name) from None
