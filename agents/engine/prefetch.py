"""The speculative plan: the planner starts together with the router, and its stream is buffered until the
route is known.

The router's call used to sit before the planner's on every task (~0.8 s of a 3-call task). Starting both at
once takes it off the critical path without changing what happens: nothing is dispatched and no ``plan_step``
event is written before the route is ``plan`` (the buffered items are replayed, in order, to the execution).
On any other route the plan is abandoned: the stream is cancelled and charged with what it had cost when it
stopped (``PlanCallStarted.spent`` plus the tokens of the steps it had written), so budgets and usage stay
honest even though the server never reported usage for a cancelled stream.

    >>> async def demo(stream):                                              # doctest: +SKIP
    ...     prefetch = PlanPrefetch(stream)
    ...     route = await router_call()
    ...     return prefetch if route == "plan" else await prefetch.abandon()
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

from agents.engine.plan_feed import close_stream
from agents.llm.base import Spend, Usage
from agents.roles.messages import PlanCallStarted, PlanCompleted, PlanFailed, PlanItem, StepEmitted

__all__ = ["PlanPrefetch", "SpentSoFar", "spent_so_far"]

_FIRST_ITEM_WAIT_S = 0.25
"""On abandon, how long to wait for a stream that has started but not yet said what its call costs (on Ray
the first item is a few ms behind the start): without it, a call the server already received would go
unaccounted."""


class PlanPrefetch:
    """Reads a plan stream in the background into a buffer; iterate it (once) to replay the buffer and follow
    the live stream, or ``abandon`` it."""

    def __init__(self, stream: AsyncIterator[PlanItem]) -> None:
        self._stream = stream
        self._items: deque[PlanItem] = deque()
        """Read and not replayed yet: the replay takes each item out (kept, a plan's items, their spends and
        call records stayed alive as long as the task, for the cyclic GC to walk)."""
        self._spent = SpentSoFar()
        """What the stream had cost at its last item, for ``abandon``."""
        self._error: BaseException | None = None
        self._arrived = asyncio.Event()
        self._pump = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for item in self._stream:
                self._items.append(item)
                self._spent.take(item)
                self._arrived.set()
                if isinstance(item, PlanCompleted | PlanFailed):
                    await close_stream(self._stream)  # now, not by the garbage collector's hook (plan_feed)
                    return
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - re-raised to whoever reads the plan
            self._error = exc
        finally:
            self._arrived.set()

    def __aiter__(self) -> AsyncIterator[PlanItem]:
        return self._replay()

    async def _replay(self) -> AsyncIterator[PlanItem]:
        items = self._items
        try:
            while True:
                while items:
                    yield items.popleft()
                if self._pump.done():
                    if self._error is not None:
                        raise self._error
                    return
                self._arrived.clear()
                if items or self._pump.done():
                    continue
                await self._arrived.wait()
        finally:
            if not self._pump.done():
                await self._cancel()

    async def abandon(self) -> Spend:
        """Cancel the plan and return what it cost: the last ``PlanCallStarted.spent`` (earlier rounds and the
        current call's prompt) plus the output tokens of the steps the current call had written."""
        if not self._pump.done() and not self._spent.call_started:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._arrived.wait()), _FIRST_ITEM_WAIT_S)
        await self._cancel()
        return self._spent.total()

    async def _cancel(self) -> None:
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._pump
        await close_stream(self._stream)


def spent_so_far(items: Iterable[PlanItem]) -> Spend:
    """What a plan stream had cost at its last item (pure)."""
    spent = SpentSoFar()
    for item in items:
        spent.take(item)
    return spent.total()


@dataclass(slots=True)
class SpentSoFar:
    """``spent_so_far`` folded one item at a time (``abandon`` uses it: the items themselves are not kept)."""

    spent: Spend = field(default_factory=Spend)
    """The last ``PlanCallStarted.spent``: earlier rounds and the current call's prompt."""
    output_tokens: int = 0
    """The most output tokens a step of the current call had been written at."""
    final: Spend | None = None
    """The whole stream's spend, once it said so (``PlanCompleted``/``PlanFailed``)."""
    call_started: bool = False

    def take(self, item: PlanItem) -> None:
        if self.final is not None:
            return
        match item:
            case PlanCallStarted(spent=started):
                self.spent, self.output_tokens, self.call_started = started, 0, True
            case StepEmitted(output_tokens=tokens):
                self.output_tokens = max(self.output_tokens, tokens)
            case PlanCompleted(spend=spend) | PlanFailed(spend=spend):
                self.final = spend
            case _:
                pass

    def total(self) -> Spend:
        if self.final is not None:
            return self.final
        return _with_written(self.spent, self.output_tokens)


def _with_written(spent: Spend, output_tokens: int) -> Spend:
    written = Usage(output_tokens=output_tokens)
    if not output_tokens or not spent.calls:
        return spent + Spend(written)
    # Into the abandoned call's own record too: a task's cost is computed from its records (as the live view
    # does).
    last = dict(spent.calls[-1])
    last["usage"] = (Usage.model_validate(last.get("usage") or {}) + written).model_dump()
    return Spend(spent.usage + written, (*spent.calls[:-1], last))
