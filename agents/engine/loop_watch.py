"""Says when an event loop stops turning, and where it was: a Supervisor drives every step's timers and bounds on
one loop, so a callback that blocks it (a synchronous write, a slow parse, a starved process) makes every timer on
it fire late, and a late bound can be read as a dead executor.

A heartbeat on the loop notes the time every ``interval_s``; a thread of its own checks it. When the heartbeat is
older than ``stall_s``, the thread reads the loop thread's stack at that moment and reports it once; when the loop
turns again, it reports how long the stall lasted. The stack is where the loop was, not necessarily what started
the stall (a process starved of CPU shows wherever it was descheduled), which the report says.

    >>> import asyncio, time
    >>> stalls = []
    >>> async def main():
    ...     watch = LoopWatch(stall_s=0.2, interval_s=0.05, report=lambda stall: stalls.append(stall))
    ...     watch.start()
    ...     await asyncio.sleep(0.1)
    ...     time.sleep(0.6)  # blocks the loop
    ...     await asyncio.sleep(0.5)
    ...     watch.stop()
    >>> asyncio.run(main())
    >>> [s.ended for s in stalls], "time.sleep(0.6)" in stalls[0].stack
    ([False, True], True)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LoopStall", "LoopWatch", "log_stall"]

log = logging.getLogger("tetrarch.loop")


@dataclass(frozen=True, slots=True)
class LoopStall:
    """One report: the loop has not turned for ``seconds`` (``ended``: it turns again; the stall lasted that long)."""

    seconds: float
    stack: str
    """The loop thread's stack when the stall was seen (empty in the report of its end)."""
    ended: bool = False


def log_stall(stall: LoopStall, owner: str = "the event loop") -> None:
    """The default report: a warning in the process's log."""
    if stall.ended:
        log.warning("%s turned again after %.1f s", owner, stall.seconds)
    else:
        log.warning("%s has not turned for %.1f s: timers on it fire late. Its thread was in (where it was, which "
                    "is not always the cause: a process starved of CPU stops anywhere):\n%s",
                    owner, stall.seconds, stall.stack)


class LoopWatch:
    """Start it on the loop it watches (from a coroutine); ``stop()`` from anywhere."""

    # A beat a second: each wake-up of a process beside the embedded model stalls its decoding threads
    # (agents.llm.profile.QUIET_LOCAL_RAY), and a stall shorter than a few seconds harms no bound.
    def __init__(self, *, stall_s: float = 5.0, interval_s: float = 1.0,
                 report: Callable[[LoopStall], None] = log_stall, clock: Callable[[], float] = time.monotonic) -> None:
        if stall_s <= interval_s:
            raise ValueError(f"stall_s={stall_s} must be longer than interval_s={interval_s}")
        self._stall_s, self._interval_s, self._report, self._clock = stall_s, interval_s, report, clock
        self._beat = clock()
        self._loop_thread = 0
        self._stopped = threading.Event()
        self._heartbeat: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> LoopWatch:
        self._loop_thread = threading.get_ident()
        self._beat = self._clock()
        self._heartbeat = asyncio.get_running_loop().create_task(self._beats())
        self._thread = threading.Thread(target=self._watch, name="loop-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._heartbeat is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed already
                self._heartbeat.get_loop().call_soon_threadsafe(self._heartbeat.cancel)

    async def _beats(self) -> None:
        while not self._stopped.is_set():
            self._beat = self._clock()
            await asyncio.sleep(self._interval_s)

    def _watch(self) -> None:
        seen: float | None = None  # the heartbeat a reported stall stopped at
        while not self._stopped.wait(self._interval_s):
            if self._loop_gone():
                return  # its owner ended without stop(): nothing is left to watch
            beat = self._beat
            if seen is not None and beat != seen:
                self._safely(LoopStall(seconds=beat - seen, stack="", ended=True))
                seen = None
            late = self._clock() - beat
            if seen is None and late >= self._stall_s:
                seen = beat
                self._safely(LoopStall(seconds=late, stack=self._stack()))

    def _loop_gone(self) -> bool:
        heartbeat = self._heartbeat
        return (heartbeat is None or heartbeat.get_loop().is_closed()
                or self._loop_thread not in sys._current_frames())

    def _stack(self) -> str:
        frame = sys._current_frames().get(self._loop_thread)
        return "".join(traceback.format_stack(frame)) if frame is not None else "(the loop's thread has ended)"

    def _safely(self, stall: LoopStall) -> None:
        try:
            self._report(stall)
        except Exception:  # noqa: BLE001 - a failing report must not end the watch
            log.exception("the loop watch's report failed")
