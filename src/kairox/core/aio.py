"""Running blocking store calls from async code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def blocking(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking read off the event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)


async def shielded(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking write off the loop; a cancelled caller never leaves it half-done."""
    return await asyncio.shield(asyncio.to_thread(fn, *args, **kwargs))


class TimedOut:
    """What ``get_within`` returns when nothing came in time."""


TIMED_OUT = TimedOut()


async def get_within(queue: asyncio.Queue[T], seconds: float | None) -> T | TimedOut:
    """The queue's next item, or ``TIMED_OUT`` after ``seconds`` (None: no limit).

    Use this rather than ``asyncio.wait_for(queue.get(), ...)``: on Python 3.11 that returns an
    item which arrives as the caller is cancelled and loses the cancellation, so a cancelled
    reader of a busy queue keeps running. An item is never lost: a get cancelled on timeout
    leaves its item in the queue."""
    getter = asyncio.ensure_future(queue.get())
    try:
        done, _ = await asyncio.wait((getter,), timeout=seconds)
    finally:
        if not getter.done():
            getter.cancel()
    return getter.result() if done else TIMED_OUT
