"""One turn as a stream: the session's events as they are committed, then the outcome.

The events come from the store's one ordered stream (the one ``facade.events.subscribe``
follows). Events at or below the turn's mark (the last seq when the turn took the session's
lease) belong to whoever held the session before (a process this one waited for with
``--wait``): they are held back until the mark is known, then dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any

from kairox.core.events import StoredEvent
from kairox.core.outcomes import TurnOutcome
from kairox.runtime.actor import SendMessage, SessionActor
from kairox.store.hub import Subscription


async def stream_turn(
    actor: SessionActor, subscription: Subscription, text: str
) -> AsyncGenerator[StoredEvent | TurnOutcome, None]:
    """Queue ``SendMessage(text)`` on ``actor`` and yield the turn's events from
    ``subscription`` (the session's, opened before the command was queued), once each and in
    seq order, then its ``TurnOutcome``. Closes the subscription."""
    command = SendMessage(text)
    future = actor.enqueue(command)
    mark: int | None = None
    held: list[StoredEvent] = []
    getter: asyncio.Future[StoredEvent] | None = None
    try:
        while True:
            if getter is None:
                getter = asyncio.ensure_future(anext(subscription))
            waiting: set[asyncio.Future[Any]] = {getter, future}
            if mark is None:
                waiting.add(command.started)
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if mark is None and command.started.done():
                mark = command.started.result()
                for event in held:
                    if event.seq > mark:
                        yield event
                held = []
            if getter.done():
                event = getter.result()
                getter = None
                if mark is None:
                    held.append(event)
                elif event.seq > mark:
                    yield event
                continue
            if not future.done():
                continue  # the turn started: keep waiting on the same getter
            getter.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await getter
            break
        # Every event of the turn was published before its future resolved.
        for event in subscription.drain():
            if mark is not None and event.seq > mark:
                yield event
        yield future.result()
    finally:
        if getter is not None:
            getter.cancel()
        subscription.close()
