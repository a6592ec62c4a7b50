"""ScriptedLLM: a fake chat model that plays a fixed list of replies per role, and says when it runs out.

It never wraps around to its first answer (a fake that does hides bugs): a request for a role whose
replies are used up raises ``LLMScriptExhausted``. ``calls`` keeps every request so tests can assert on
prompts; ``assert_complete()`` fails a test that scripted replies the code never asked for.

Example:
    >>> import asyncio
    >>> llm = ScriptedLLM({"router": ['{"route": "direct"}']})
    >>> asyncio.run(llm.complete(LLMRequest(role="router", messages=[]))).text
    '{"route": "direct"}'
    >>> llm.assert_complete()
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from agents.llm.profile import HOSTED, ModelProfile
from agents.llm.base import LLMReply, LLMRequest, LLMScriptExhausted
from agents.llm.function_llm import Sleep, _ProducerLLM

__all__ = ["ScriptEntry", "ScriptedLLM"]

ScriptEntry = str | LLMReply | BaseException
"""One scripted answer: reply text, a full ``LLMReply``, or an exception to raise for that call."""

_PREVIEW_CHARS = 60


def _preview(entry: ScriptEntry) -> str:
    if isinstance(entry, BaseException):
        return f"raise {type(entry).__name__}({entry})"
    text = entry.text if isinstance(entry, LLMReply) else entry
    return repr(text if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + "…")


class ScriptedLLM(_ProducerLLM):
    """Answers each role from its own queue of scripted replies; streams and costs them like ``FunctionLLM``.

    Example:
        >>> llm = ScriptedLLM({"planner": ["{}", RuntimeError("boom")]})
        >>> llm.remaining()
        {'planner': 2}
    """

    def __init__(self, script: Mapping[str, Sequence[ScriptEntry]], *, stream_chunk_size: int | None = None,
                 chunk_delay_s: float = 0.0, model: str = "scripted", sleep: Sleep = asyncio.sleep,
                 clock: Callable[[], float] = time.perf_counter, profile: ModelProfile = HOSTED) -> None:
        super().__init__(stream_chunk_size=stream_chunk_size, chunk_delay_s=chunk_delay_s, model=model,
                         sleep=sleep, clock=clock, profile=profile)
        for role, entries in script.items():
            if isinstance(entries, (str, bytes)):
                # A bare string would be scripted one character per call — always a typo for [text].
                raise TypeError(f"ScriptedLLM: the script for role {role!r} must be a list of replies, "
                                f"not a single string; write {{{role!r}: [reply]}}")
        self._queues: dict[str, deque[ScriptEntry]] = {role: deque(items) for role, items in script.items()}
        self._scripted: dict[str, int] = {role: len(entries) for role, entries in script.items()}
        self.calls: list[LLMRequest] = []

    async def _produce(self, request: LLMRequest) -> str | LLMReply:
        self.calls.append(request)
        queue = self._queues.get(request.role)
        if not queue:
            held = self._scripted.get(request.role, 0)
            used = sum(1 for call in self.calls if call.role == request.role)
            raise LLMScriptExhausted(
                f"ScriptedLLM: no reply left for role {request.role!r}: the script held {held} "
                f"(this is call {used} for that role). Script more replies for {request.role!r}, or find "
                f"out why the code called it more often than the test expects.")
        entry = queue.popleft()
        if isinstance(entry, BaseException):
            raise entry
        return entry

    def remaining(self) -> dict[str, int]:
        """Unconsumed replies per role (roles with none left are omitted)."""
        return {role: len(queue) for role, queue in self._queues.items() if queue}

    def assert_complete(self) -> None:
        """Raise ``AssertionError`` listing every scripted reply the code never asked for."""
        left = {role: list(queue) for role, queue in self._queues.items() if queue}
        if left:
            lines = [f"  {role}: {len(entries)} left, next {_preview(entries[0])}"
                     for role, entries in left.items()]
            raise AssertionError("ScriptedLLM: scripted replies were never requested:\n" + "\n".join(lines))

    def __repr__(self) -> str:
        return f"ScriptedLLM(remaining={self.remaining()}, calls={len(self.calls)}, model={self.model!r})"
