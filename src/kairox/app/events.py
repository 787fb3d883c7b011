"""Reading the event log and following it, including events written by other processes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from kairox.core.aio import blocking
from kairox.core.events import StoredEvent
from kairox.services import Services


class EventsArea:
    def __init__(self, services: Services) -> None:
        self._s = services

    async def list(
        self, *, session: str | None = None, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        session_id = (await blocking(self._s.sessions.get, session)).id if session else None
        return await blocking(self._s.events.read, after=after, session_id=session_id, limit=limit)

    async def last_seq(self) -> int:
        return await blocking(self._s.events.last_seq)

    async def subscribe(
        self, *, session: str | None = None, after: int | None = None, poll_s: float = 0.2
    ) -> AsyncIterator[StoredEvent]:
        """Yield new events as they are appended, by any process, by polling the highest seq."""
        cursor = await self.last_seq() if after is None else after
        session_id = (await blocking(self._s.sessions.get, session)).id if session else None
        while True:
            batch = await blocking(
                self._s.events.read, after=cursor, session_id=session_id, limit=500
            )
            for event in batch:
                cursor = event.seq
                yield event
            if not batch:
                # Events of other sessions advance the global seq; skip past them cheaply.
                await asyncio.sleep(poll_s)
