"""The planner's stream read ahead: one reader task takes every item as it arrives and hands the execution
all the items that arrived together at once.

Reading one item per wake-up of the execution loop (a future per ``__anext__``) cost several event-loop
iterations and a store commit per step: a 1,000-step plan given in one reply was dispatched one step per
iteration, and the plan's arrival paced the whole run. Now the steps that arrive together are added,
dispatched and written in one tick.

Example:
    >>> import asyncio
    >>> async def items():
    ...     for i in range(3):
    ...         yield i
    >>> async def main():
    ...     woken = asyncio.Event()
    ...     feed = PlanFeed(items(), woken.set, is_last=lambda item: item == 2)
    ...     await woken.wait()
    ...     await asyncio.sleep(0)
    ...     return feed.take(), feed.done
    >>> asyncio.run(main())
    ([0, 1, 2], True)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

__all__ = ["PlanFeed", "StreamEnded", "close_stream"]

T = TypeVar("T")


class StreamEnded(Exception):
    """The stream stopped before its last item (the planner ended without finishing its plan)."""


class PlanFeed(Generic[T]):
    """Reads ``stream`` in a task of its own until ``is_last(item)``; ``take()`` returns what arrived since the
    last ``take`` and re-raises the stream's error (or ``StreamEnded``) once the items before it are taken.
    ``on_item`` is called (from the reader task) whenever something arrives."""

    def __init__(self, stream: AsyncIterator[T], on_item: Callable[[], None], *,
                 is_last: Callable[[T], bool]) -> None:
        self._stream, self._on_item, self._is_last = stream, on_item, is_last
        self._items: list[T] = []
        self._error: BaseException | None = None
        self._reader_done = False
        self.done = False
        """The last item (or the stream's error) was taken: nothing more will come."""
        self._reader = asyncio.ensure_future(self._read())

    @property
    def pending(self) -> bool:
        """Items (or the stream's end) wait to be taken."""
        return bool(self._items) or (self._reader_done and not self.done)

    async def _read(self) -> None:
        try:
            while True:
                item = await self._stream.__anext__()
                self._items.append(item)
                self._on_item()
                if self._is_last(item):
                    # Not read past its last item (it may hold a model call's slot), but closed now: an async
                    # generator left open is closed by the garbage collector's hook instead, which costs a
                    # cross-thread wake-up of the loop and a task of its own per stream.
                    await close_stream(self._stream)
                    return
        except StopAsyncIteration:
            self._error = StreamEnded()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - handed to the execution, which raises it itself
            self._error = exc
        finally:
            self._reader_done = True
            self._on_item()

    def take(self) -> list[T]:
        items, self._items = self._items, []
        if items and self._is_last(items[-1]):
            self.done = True
        elif not items and self._reader_done and not self.done:
            self.done = True
            if self._error is not None:
                raise self._error
        return items

    async def close(self) -> None:
        """Stop reading and close the stream (a stopped or restarted execution)."""
        self.done = True
        if not self._reader.done():
            self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader
        await close_stream(self._stream)


async def close_stream(stream: AsyncIterator[object]) -> None:
    """``aclose`` the stream if it has one; closing a broken stream must not mask the real error."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
