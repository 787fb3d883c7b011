"""``get_within``: a queue read with a time limit that never loses an item or a cancellation."""

from __future__ import annotations

import asyncio

from kairox.core.aio import TIMED_OUT, get_within


async def test_an_item_comes_back_and_a_quiet_queue_times_out_keeping_later_items() -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    assert await get_within(queue, 0.01) is TIMED_OUT
    queue.put_nowait(1)
    assert await get_within(queue, 0.01) == 1
    queue.put_nowait(2)  # after a timed-out get, the item is still there
    assert await get_within(queue, None) == 2


async def test_a_cancelled_reader_of_a_busy_queue_stops() -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()

    async def feed() -> None:
        while True:
            queue.put_nowait(1)
            await asyncio.sleep(0)

    async def read() -> None:
        while True:
            await get_within(queue, 0.05)

    feeder = asyncio.create_task(feed())
    try:
        for _ in range(20):
            reader = asyncio.create_task(read())
            for _ in range(30):
                await asyncio.sleep(0)
            reader.cancel()
            done, _ = await asyncio.wait((reader,), timeout=5)
            assert done and reader.cancelled()
    finally:
        feeder.cancel()
