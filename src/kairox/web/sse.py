"""Server-sent events: framing, heartbeats, and the response type the streaming routes return.

Each facade event becomes one SSE event named after its type, with the seq as its id, so an
``EventSource`` that reconnects resumes where it stopped (``Last-Event-ID``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TypeVar

from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from kairox.core.aio import TimedOut, get_within
from kairox.core.events import StoredEvent

T = TypeVar("T")

EVENT_STREAM = "text/event-stream"
SSE_CONTENT: dict[str, object] = {EVENT_STREAM: {"schema": {"type": "string"}}}
SSE_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {
        "description": "A stream of server-sent events; each `data` line is one JSON object.",
        "content": SSE_CONTENT,
    }
}


def frame(event: str, data: BaseModel, *, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    # model_dump_json never emits raw newlines, so the data fits on one line.
    return f"{head}event: {event}\ndata: {data.model_dump_json()}\n\n".encode()


def event_frame(event: StoredEvent) -> bytes:
    return frame(event.type, event, event_id=event.seq)


HEARTBEAT = b": keep-alive\n\n"


async def with_heartbeats(source: AsyncIterator[T], every_s: float) -> AsyncIterator[T | None]:
    """Items of ``source``, with ``None`` whenever ``every_s`` passes without one.

    A pump task reads the source, so a timeout never cancels the source in the middle of a step.
    """
    queue: asyncio.Queue[tuple[T | None, BaseException | None, bool]] = asyncio.Queue(maxsize=64)

    async def pump() -> None:
        try:
            async for item in source:
                await queue.put((item, None, False))
            await queue.put((None, None, True))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await queue.put((None, exc, True))

    task = asyncio.create_task(pump())
    try:
        while True:
            got = await get_within(queue, every_s)
            if isinstance(got, TimedOut):
                yield None
                continue
            item, error, finished = got
            if error is not None:
                raise error
            if finished:
                return
            yield item
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


def event_stream(body: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        body,
        media_type=EVENT_STREAM,
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


__all__ = [
    "EVENT_STREAM",
    "HEARTBEAT",
    "SSE_CONTENT",
    "SSE_RESPONSES",
    "event_frame",
    "event_stream",
    "frame",
    "with_heartbeats",
]
