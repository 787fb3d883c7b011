"""The chat screen gets every event of a turn one way only: the store's ordered stream.

A turn with a proposal (scripted model) reaches ``on_store_event`` once per committed event, in
seq order, and so does a decision written by another process (the CLI on the same home).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tuikit import MARKER, SIZE, AppMaker, send, wait_until

from kairox.app import AppFacade
from kairox.app.chat import ChatUpdate
from kairox.core.events import StoredEvent
from kairox.core.types import MemoryStatus
from kairox.tui.chat_screen import ChatScreen


def spy_on(screen: ChatScreen, facade: AppFacade) -> list[StoredEvent]:
    """Record each event that reaches the screen by any path: the app's follower, a read of
    the log, or a turn's own stream."""
    received: list[StoredEvent] = []
    deliver = screen.on_store_event
    read = facade.events.list
    chat = facade.chat
    stream = chat.send

    async def recording(event: StoredEvent) -> None:
        received.append(event)
        await deliver(event)

    async def reading(**kwargs: Any) -> list[StoredEvent]:
        events = await read(**kwargs)
        received.extend(events)
        return events

    async def streaming(session: str, text: str) -> AsyncIterator[ChatUpdate]:
        async for update in stream(session, text):
            if isinstance(update, StoredEvent):
                received.append(update)
            yield update

    screen.on_store_event = recording  # type: ignore[method-assign]
    facade.events.list = reading  # type: ignore[method-assign]
    chat.send = streaming  # type: ignore[method-assign]
    return received


async def test_a_turn_with_a_proposal_reaches_the_screen_once_per_event_in_seq_order(
    make_app: AppMaker, kairox_home: Path
) -> None:
    app = make_app([{"text": f"Hello there! {MARKER} Done.", "chunk": 3}])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.trace.text_lines() != [], "the history to load")
        start = app.followed_seq
        log_of = app.facade.events.list
        received = spy_on(screen, app.facade)
        await send(pilot, "my editor font is JetBrains Mono")

        log = await log_of(after=start)
        assert [e.seq for e in received] == [e.seq for e in log]  # once each, in seq order
        types = [e.type for e in received]
        assert types.count("UserMessageAdded") == 1
        assert types.count("MemoryProposed") == 1
        assert types.count("AssistantMessageCompleted") == 1
        assert types.count("ModelTokenDelta") >= 2  # the first piece at once, the rest coalesced
        transcript = screen.chat.transcript().splitlines()
        assert transcript == [
            "you my editor font is JetBrains Mono",
            "kairox Hello there!  Done.",
            "[pending] JetBrains Mono",
        ]
        trace = screen.trace.text_lines()
        assert sum(line.startswith("MemoryProposed") for line in trace) == 1
        assert sum(line.startswith("UserMessageAdded") for line in trace) == 1

        # Another process decides the proposal: its event arrives once, after the turn's.
        [card] = screen.chat.cards()
        env = {**os.environ, "KAIROX_HOME": str(kairox_home)}
        await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "kairox", "memory", "approve", card.memory_id],
            check=True,
            capture_output=True,
            timeout=120,
            env=env,
        )
        await wait_until(
            pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "the CLI's decision"
        )
        await wait_until(pilot, lambda: app.followed_seq >= log[-1].seq + 1, "the follower")
        log = await log_of(after=start)
        assert [e.seq for e in received] == [e.seq for e in log]
        assert [e.type for e in received].count("MemoryAccepted") == 1
        assert len(screen.chat.cards()) == 1
