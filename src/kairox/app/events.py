"""Reading the event log and following it, including events written by other processes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from kairox.core.aio import blocking
from kairox.core.events import StoredEvent
from kairox.runtime.services import Services


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
        """Yield new events as they are appended, by any process. On Postgres a NOTIFY wakes the
        follower at once (``poll_s`` is only the fallback); SQLite has no notification, so the
        follower polls the highest seq every ``poll_s``."""
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
                await self._wait(cursor, poll_s)

    async def _wait(self, cursor: int, poll_s: float) -> None:
        events = self._s.events
        if not events.pushes_changes:
            await asyncio.sleep(poll_s)
            return
        # Bounded waits keep a cancelled follower from pinning a worker thread for long.
        deadline = asyncio.get_running_loop().time() + poll_s
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0 or await blocking(events.wait_for_append, cursor, min(left, 1.0)):
                return
