"""Chat: start or resume sessions, send messages with streamed events, switch profile, cancel,
and compact. Every call goes to the session's actor, so commands never overlap."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from kairox.compaction.pipeline import CompactionResult
from kairox.core.events import ModelCallStarted, StoredEvent
from kairox.core.types import SessionState
from kairox.runtime.actor import Cancel, Compact, SendMessage, SwitchProfile
from kairox.runtime.engine import Engine
from kairox.runtime.turn import TurnOutcome
from kairox.store.sessions import SessionInfo


@dataclass(frozen=True)
class TurnDone:
    """The last item of ``send``: the turn's outcome."""

    outcome: TurnOutcome


ChatUpdate = StoredEvent | TurnDone

LOADING_LABEL = "loading model…"
WAITING_LABEL = "waiting for the model…"


def waiting_label(call: ModelCallStarted) -> str:
    """What a surface shows, with a spinner, from a model call's start to its first token."""
    return LOADING_LABEL if call.loading else WAITING_LABEL


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
                await asyncio.wait({getter, future}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                else:
                    getter.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await getter
            outcome = future.result()
            if outcome is None:  # cancelled: the actor recorded why
                outcome = TurnOutcome(turn=0, failure="cancelled")
            yield TurnDone(outcome)
        finally:
            unsubscribe()

    async def preload(self, workspace: str | Path, profile: str | None = None) -> bool:
        """Load the embedded model of ``profile`` (default: the workspace's) now, True if it had
        to load, so the first turn does not wait; ``chat`` and ``serve`` call this at start and
        keep the model loaded for the life of the process."""
        return await self._engine.preload(workspace, profile)

    async def model(self, session: str) -> str:
        """The model spec the session's next turn uses (``--model`` wins over the profile)."""
        info = await self._engine.session_info(session)
        return self._engine.profile_for(info).model

    async def compact(self, session: str) -> CompactionResult:
        """Compact now; queued behind a running turn, never run in the middle of one."""
        result: CompactionResult = await self._engine.actor(session).submit(Compact("manual"))
        return result

    def compact_later(self, session: str) -> asyncio.Future[CompactionResult]:
        """Queue a compaction and return at once; the future resolves when it has run."""
        return self._engine.actor(session).enqueue(Compact("manual"))

    async def switch_profile(self, session: str, alias: str) -> SessionInfo:
        info: SessionInfo = await self._engine.actor(session).submit(SwitchProfile(alias))
        return info

    async def cancel(self, session: str, reason: str = "cancelled by the user") -> bool:
        return bool(await self._engine.actor(session).submit(Cancel(reason)))

    def state(self, session: str) -> SessionState:
        return self._engine.actor(session).state

    def queued(self, session: str) -> int:
        return self._engine.actor(session).pending
