"""The loop watch reports a loop that stopped turning, with where its thread was, once per stall, and its end
(agents.engine.loop_watch)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agents.engine.loop_watch import LoopStall, LoopWatch

STALL_S = 0.2
INTERVAL_S = 0.05


def _blocking_parse(seconds: float) -> None:
    time.sleep(seconds)  # stands for a synchronous call made on the loop


def _watched(body, report) -> None:
    async def main() -> None:
        watch = LoopWatch(stall_s=STALL_S, interval_s=INTERVAL_S, report=report).start()
        try:
            await body()
        finally:
            watch.stop()

    asyncio.run(main())


def test_a_blocked_loop_is_reported_once_with_the_call_that_blocks_it_and_then_its_end():
    stalls: list[LoopStall] = []

    async def body() -> None:
        await asyncio.sleep(0.1)
        _blocking_parse(0.8)
        await asyncio.sleep(0.5)

    _watched(body, stalls.append)
    assert [s.ended for s in stalls] == [False, True]
    assert "_blocking_parse" in stalls[0].stack and "time.sleep" in stalls[0].stack
    assert stalls[0].seconds >= STALL_S
    assert STALL_S <= stalls[1].seconds <= 0.8 + 0.5


def test_a_loop_that_keeps_turning_is_never_reported():
    stalls: list[LoopStall] = []

    async def body() -> None:
        for _ in range(20):
            _blocking_parse(0.02)  # short synchronous work between turns is normal
            await asyncio.sleep(0.01)

    _watched(body, stalls.append)
    assert stalls == []


def test_a_report_that_fails_does_not_end_the_watch():
    calls: list[bool] = []

    def report(stall: LoopStall) -> None:
        calls.append(stall.ended)
        raise RuntimeError("the log handler is broken")

    async def body() -> None:
        await asyncio.sleep(0.1)
        _blocking_parse(0.5)
        await asyncio.sleep(0.1)
        _blocking_parse(0.5)
        await asyncio.sleep(0.4)

    _watched(body, report)
    assert calls[:3] == [False, True, False]


def test_the_watch_thread_ends_when_its_loop_is_gone_without_stop():
    async def main() -> LoopWatch:
        return LoopWatch(stall_s=STALL_S, interval_s=INTERVAL_S, report=lambda stall: None).start()

    # The watch's own thread, not the process's thread count: another test's thread ending meanwhile made the count
    # drop below its start (CI, 2026-11-29).
    watch = asyncio.run(main())
    thread = watch._thread
    assert thread is not None
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_stall_shorter_than_the_beat_is_refused():
    with pytest.raises(ValueError, match="stall_s"):
        LoopWatch(stall_s=0.5, interval_s=0.5)
