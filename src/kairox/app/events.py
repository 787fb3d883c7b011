"""Reading the event log, and following it: the one ordered stream of committed events.

Every surface renders from ``subscribe``: each committed event, from this process or another one
on the same home, arrives once and in seq order. ``list(until=...)`` reads history up to the seq a
subscription starts after, so history and live events never overlap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from kairox.app.sessions import resolve_in
from kairox.core.aio import blocking
from kairox.core.errors import InvalidInput
from kairox.core.events import StoredEvent
from kairox.core.ids import workspace_id_for
from kairox.services import Services
from kairox.store.hub import DEFAULT_POLL_S


class EventsArea:
    def __init__(self, services: Services) -> None:
        self._s = services

    async def list(
        self,
        *,
        session: str | None = None,
        workspace: str | Path | None = None,
        after: int = 0,
        until: int | None = None,
        limit: int | None = None,
        in_workspace: bool = False,
        deltas: bool = True,
    ) -> list[StoredEvent]:
        """Events with ``after < seq <= until``, oldest first; of one session when given (an id,
        or a name resolved in ``workspace``); with ``in_workspace``, only the events written in
        ``workspace`` (home-wide events without a workspace are left out); without ``deltas``,
        no ``ModelTokenDelta`` (the reply's text is in ``AssistantMessageCompleted``)."""
        session_id = await self._session_id(session, workspace)
        workspace_id = None
        if in_workspace:
            if workspace is None:
                raise InvalidInput("in_workspace needs a workspace")
            workspace_id = workspace_id_for(workspace)
        return await blocking(
            self._s.events.read,
            after=after,
            until=until,
            session_id=session_id,
            limit=limit,
            workspace_id=workspace_id,
            exclude_types=() if deltas else ("ModelTokenDelta",),
        )

    async def last_seq(self) -> int:
        return await blocking(self._s.events.last_seq)

    async def subscribe(
        self,
        *,
        session: str | None = None,
        workspace: str | Path | None = None,
        after: int | None = None,
        poll_s: float = DEFAULT_POLL_S,
    ) -> AsyncIterator[StoredEvent]:
        """Every event committed after ``after`` (default: from now), by any process, once each
        and in seq order. Ending the iteration (or cancelling it) unsubscribes."""
        session_id = await self._session_id(session, workspace)
        subscription = self._s.events.subscribe(after=after, session_id=session_id, poll_s=poll_s)
        try:
            async for event in subscription:
                yield event
        finally:
            subscription.close()

    async def _session_id(self, session: str | None, workspace: str | Path | None) -> str | None:
        if not session:
            return None
        if workspace is not None:
            return (await blocking(resolve_in, self._s.sessions, session, workspace)).id
        return (await blocking(self._s.sessions.get, session)).id
