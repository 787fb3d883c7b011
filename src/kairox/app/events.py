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
        home_wide: bool = False,
    ) -> list[StoredEvent]:
        """Events with ``after < seq <= until``, oldest first; of one session when given (an id,
        or a name resolved in ``workspace``); with ``in_workspace``, only the events written in
        ``workspace`` (home-wide events without a workspace, such as a decision on a user
        memory, only with ``home_wide``); without ``deltas``, no ``ModelTokenDelta`` (the
        reply's text is in ``AssistantMessageCompleted``)."""
        session_id = await self._session_id(session, workspace)
        workspace_id = self._only(workspace, in_workspace)
        return await blocking(
            self._s.events.read,
            after=after,
            until=until,
            session_id=session_id,
            limit=limit,
            workspace_id=workspace_id,
            exclude_types=() if deltas else ("ModelTokenDelta",),
            home_wide=home_wide,
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
        in_workspace: bool = False,
        home_wide: bool = False,
    ) -> AsyncIterator[StoredEvent]:
        """Every event committed after ``after`` (default: from now), by any process, once each
        and in seq order; with ``in_workspace``, only those written in ``workspace`` (and, with
        ``home_wide``, those of no workspace), as ``list`` filters them. Ending the iteration
        (or cancelling it) unsubscribes."""
        session_id = await self._session_id(session, workspace)
        only = self._only(workspace, in_workspace)
        subscription = self._s.events.subscribe(after=after, session_id=session_id, poll_s=poll_s)
        try:
            async for event in subscription:
                if (
                    only is None
                    or event.workspace_id == only
                    or (home_wide and event.workspace_id is None)
                ):
                    yield event
        finally:
            subscription.close()

    @staticmethod
    def _only(workspace: str | Path | None, in_workspace: bool) -> str | None:
        if not in_workspace:
            return None
        if workspace is None:
            raise InvalidInput("in_workspace needs a workspace")
        return workspace_id_for(workspace)

    async def _session_id(self, session: str | None, workspace: str | Path | None) -> str | None:
        if not session:
            return None
        if workspace is not None:
            return (await blocking(resolve_in, self._s.sessions, session, workspace)).id
        return (await blocking(self._s.sessions.get, session)).id
