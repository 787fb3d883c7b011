"""Streamed reply text, coalesced before it is written: a reply is a handful of log rows.

The first visible piece is written at once (time to first token is unchanged); after it, pieces
are held until 256 characters wait or 50 ms have passed since the last write, and whatever waits
is written when the stream ends, fails, stalls for 50 ms (``paced`` wakes the turn), or another
event of the turn must come after it. The visible stream is the same text in fewer, larger
``ModelTokenDelta`` events, never held back longer than 50 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from datetime import datetime
from typing import TypeVar

from kairox.core.aio import TimedOut, get_within

T = TypeVar("T")

INTERVAL_S = 0.05
MAX_CHARS = 256


class DeltaCoalescer:
    def __init__(
        self,
        now: Callable[[], datetime],
        *,
        interval_s: float = INTERVAL_S,
        max_chars: int = MAX_CHARS,
    ) -> None:
        self._now = now
        self._interval_s = interval_s
        self._max_chars = max_chars
        self._pending: list[str] = []
        self._size = 0
        self._last: datetime | None = None

    def feed(self, text: str) -> str | None:
        """Add visible text; the text to write now, if it is time to write."""
        if text:
            self._pending.append(text)
            self._size += len(text)
        if not self._pending:
            return None
        if self._last is None or self._size >= self._max_chars:
            return self.flush()
        if (self._now() - self._last).total_seconds() >= self._interval_s:
            return self.flush()
        return None

    def due(self) -> float | None:
        """Seconds until the waiting text should be written; None when nothing waits."""
        if not self._pending or self._last is None:
            return None
        waited = (self._now() - self._last).total_seconds()
        return max(0.0, self._interval_s - waited)

    def flush(self) -> str | None:
        """Everything waiting, to write now (None when nothing waits)."""
        if not self._pending:
            return None
        text = "".join(self._pending)
        self._pending.clear()
        self._size = 0
        self._last = self._now()
        return text


_END = object()


async def paced(
    source: AsyncIterator[T], due: Callable[[], float | None]
) -> AsyncGenerator[T | None, None]:
    """The items of ``source``, and None whenever ``due()`` seconds pass without one (so a
    stalled stream never holds text back). ``source`` is read by a task of its own; closing this
    iterator (or cancelling its reader) cancels that task, which closes ``source``."""
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for item in source:
                queue.put_nowait(item)
        except Exception as exc:  # the reader re-raises it, in order
            queue.put_nowait(exc)
        queue.put_nowait(_END)

    task = asyncio.create_task(pump())
    try:
        while True:
            item = await get_within(queue, due())
            if isinstance(item, TimedOut):
                yield None
                continue
            if item is _END:
                return
            if isinstance(item, Exception):
                raise item
            yield item  # type: ignore[misc]  # the queue holds object: an item here is a T
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
