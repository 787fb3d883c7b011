"""Chat: start or resume sessions, send messages, switch profile, cancel, and compact.

Every call goes to the session's actor, so commands never overlap. ``open`` finds or starts a
session by name inside a workspace; the other calls take what it returns: the session's id (a name
unique in the home is accepted too, for scripts). ``send`` streams the session's
events from the store's one ordered stream (the same one ``facade.events.subscribe`` follows);
``run`` only waits for the outcome, for surfaces that already follow that stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kairox.app.sessions import lives_elsewhere
from kairox.app.updates import ChatUpdate, TurnDone
from kairox.core.aio import blocking
from kairox.core.events import StoredEvent
from kairox.core.ids import workspace_id_for
from kairox.core.names import check_prompt, check_session_name
from kairox.core.outcomes import CompactionResult, TurnOutcome
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
        """The session ``name`` of ``workspace``, started when it does not exist there yet. A
        name other than ``main`` that lives only in another workspace is an error saying where."""
        check_session_name(name)
        services = self._engine.services
        found = await blocking(services.sessions.find, name, workspace_id_for(workspace))
        if found is None:
            elsewhere = await blocking(lives_elsewhere, services.sessions, name, workspace)
            if elsewhere is not None:
                raise elsewhere
        return await self._engine.open_session(name, workspace=workspace, profile=profile)

    @staticmethod
    def check_prompt(text: str) -> None:
        """Refuse an empty or whitespace-only prompt before anything is created."""
        check_prompt(text)

    async def send(self, session: str, text: str) -> AsyncIterator[ChatUpdate]:
        """Run one turn, yielding each of the session's events as it is committed (once, in seq
        order), then ``TurnDone``."""
        check_prompt(text)
        actor = await self._engine.actor_for(session)
        info = await blocking(self._engine.services.sessions.get, session)
        subscription = self._engine.services.events.subscribe(session_id=info.id)
        command = SendMessage(text)
        future = actor.enqueue(command)
        # Events at or below the mark belong to whoever held the session before this turn (a
        # process this one waited for with --wait): they are held back, then dropped.
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
            yield TurnDone(future.result())
        finally:
            if getter is not None:
                getter.cancel()
            subscription.close()

    async def run(self, session: str, text: str) -> TurnOutcome:
        """Run one turn and return its outcome; its events reach ``facade.events.subscribe``."""
        check_prompt(text)
        future = (await self._engine.actor_for(session)).enqueue(SendMessage(text))
        return await asyncio.shield(future)

    async def preload(self, workspace: str | Path, profile: str | None = None) -> bool:
        """Load the embedded model of ``profile`` (default: the workspace's) now, True if it had
        to load, so the first turn does not wait; ``chat`` and ``serve`` call this at start and
        keep the model loaded for the life of the process."""
        return await self._engine.preload(workspace, profile)

    async def model(self, session: str) -> str:
        """The model spec the session's next turn uses (``--model`` wins over the profile)."""
        info = await self._engine.session_info(session)
        return self._engine.resolver.model_of(info)

    async def compact(self, session: str) -> CompactionResult:
        """Compact now; queued behind a running turn, never run in the middle of one."""
        return await (await self._engine.actor_for(session)).submit(Compact("manual"))

    def compact_later(self, session: str) -> asyncio.Future[CompactionResult]:
        """Queue a compaction and return at once; the future resolves when it has run."""
        return self._engine.actor(session).enqueue(Compact("manual"))

    async def switch_profile(self, session: str, alias: str) -> SessionInfo:
        return await (await self._engine.actor_for(session)).submit(SwitchProfile(alias))

    async def cancel(self, session: str, reason: str = "cancelled by the user") -> bool:
        return (await self._engine.actor_for(session)).cancel(reason)

    def state(self, session: str) -> SessionState:
        return self._engine.actor(session).state

    def queued(self, session: str) -> int:
        return self._engine.actor(session).pending
