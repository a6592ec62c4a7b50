"""The plan stream read ahead: items that arrive together are taken together, in order; the stream's end and
errors reach the execution after the items before them."""

from __future__ import annotations

import asyncio

import pytest

from agents.engine.plan_feed import PlanFeed, StreamEnded


async def _items(*chunks: list[object], fail: BaseException | None = None):
    for chunk in chunks:
        for item in chunk:
            yield item
        await asyncio.sleep(0.01)  # a chunk boundary: the stream waits for the network
    if fail is not None:
        raise fail


async def _drain(feed: PlanFeed, wake: asyncio.Event) -> list[list[object]]:
    takes = []
    while not feed.done:
        while not feed.pending:
            wake.clear()
            await wake.wait()
        takes.append(feed.take())
    return takes


def test_items_that_arrive_together_are_taken_together_and_the_last_one_ends_the_feed():
    async def main():
        wake = asyncio.Event()
        feed = PlanFeed(_items([1, 2, 3], [4, "end"], ["never read"]), wake.set, is_last=lambda i: i == "end")
        return await _drain(feed, wake)

    assert asyncio.run(main()) == [[1, 2, 3], [4, "end"]]


def test_a_stream_that_stops_early_raises_after_its_items():
    async def main():
        wake = asyncio.Event()
        feed = PlanFeed(_items([1, 2]), wake.set, is_last=lambda i: i == "end")
        takes = []
        with pytest.raises(StreamEnded):
            while True:
                while not feed.pending:
                    wake.clear()
                    await wake.wait()
                takes.append(feed.take())
        return takes, feed.done

    assert asyncio.run(main()) == ([[1, 2]], True)


def test_the_streams_error_is_raised_by_take():
    async def main():
        wake = asyncio.Event()
        feed = PlanFeed(_items([1], fail=ConnectionError("cut")), wake.set, is_last=lambda i: False)
        await asyncio.sleep(0.05)
        assert feed.take() == [1]
        feed.take()

    with pytest.raises(ConnectionError, match="cut"):
        asyncio.run(main())


def test_close_stops_the_reader_and_closes_the_stream():
    closed = []

    async def endless():
        try:
            while True:
                yield 1
                await asyncio.sleep(0.01)
        finally:
            closed.append(True)

    async def main():
        feed = PlanFeed(endless(), lambda: None, is_last=lambda i: False)
        await asyncio.sleep(0.03)
        await feed.close()
        return feed.done

    assert asyncio.run(main()) is True and closed == [True]
