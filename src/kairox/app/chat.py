"""Chat: start or resume sessions, send messages with streamed events, switch profile, cancel,
and compact. Every call goes to the session's actor, so commands never overlap."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from kairox.app.updates import ChatUpdate, TurnDone
from kairox.core.events import StoredEvent
from kairox.core.outcomes import CompactionResult
from kairox.core.types import SessionState
from kairox.runtime.actor import Compact, SendMessage, SwitchProfile
from kairox.runtime.engine import Engine
from kairox.store.sessions import SessionInfo


class ChatArea:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def open(
        self, name: str, *, workspace: str | Path, profile: str | None = None
    ) -> SessionInfo:
        return await self._engine.open_session(name, workspace=workspace, profile=profile)

    async def send(self, session: str, text: str) -> AsyncIterator[ChatUpdate]:
        """Run one turn, yielding each event as it is appended, then ``TurnDone``."""
        queue: asyncio.Queue[StoredEvent] = asyncio.Queue()
        unsubscribe = self._engine.subscribe(session, queue.put_nowait)
        actor = self._engine.actor(session)
        future = actor.enqueue(SendMessage(text))
        try:
            while not future.done() or not queue.empty():
                getter = asyncio.ensure_future(queue.get())
                waiting: set[asyncio.Future[object]] = {getter, future}  # type: ignore[arg-type]
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                else:
                    getter.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await getter
            yield TurnDone(future.result())
        finally:
            unsubscribe()

    async def compact(self, session: str) -> CompactionResult:
        """Compact now; queued behind a running turn, never run in the middle of one."""
        return await self._engine.actor(session).submit(Compact("manual"))

    def compact_later(self, session: str) -> asyncio.Future[CompactionResult]:
        """Queue a compaction and return at once; the future resolves when it has run."""
        return self._engine.actor(session).enqueue(Compact("manual"))

    async def switch_profile(self, session: str, alias: str) -> SessionInfo:
        return await self._engine.actor(session).submit(SwitchProfile(alias))

    async def cancel(self, session: str, reason: str = "cancelled by the user") -> bool:
        return self._engine.actor(session).cancel(reason)

    def state(self, session: str) -> SessionState:
        return self._engine.actor(session).state

    def queued(self, session: str) -> int:
        return self._engine.actor(session).pending
