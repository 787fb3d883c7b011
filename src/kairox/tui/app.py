"""``KairoxApp``: the Textual application behind ``kairox chat``.

It owns two things only: the chat screen, and one worker that follows the event log (from every
process, through ``facade.events.subscribe``: each committed event once, in seq order) and hands
each new event to the screens that show it. That stream is the only way events reach the screens.
Closing the app shuts the session actors down inside the app's own event loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from kairox.core.events import StoredEvent
from kairox.tui.chat_screen import ChatScreen
from kairox.tui.memory_browser import MemoryBrowserScreen
from kairox.tui.notices import error_line
from kairox.tui.session_events import MEMORY_EVENTS

if TYPE_CHECKING:
    from kairox.app import AppFacade
    from kairox.tui import ChatOptions

FOLLOW_POLL_S = 0.2
FOLLOW_RETRY_S = 1.0


class KairoxApp(App[None]):
    TITLE = "kairox"
    ENABLE_COMMAND_PALETTE = False
    CSS: ClassVar[str] = "Screen { background: $surface; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, facade: AppFacade, options: ChatOptions) -> None:
        super().__init__()
        self.facade = facade
        self.options = options
        self._chat_screen = ChatScreen(facade, options)
        self.followed_seq = 0
        self._followed = asyncio.Condition()

    def get_default_screen(self) -> Screen[None]:
        return self._chat_screen

    @property
    def chat_screen(self) -> ChatScreen:
        return self._chat_screen

    def follow(self, after: int) -> None:
        """Start following the log after ``after`` (the chat screen calls this once it is open)."""
        self.followed_seq = after
        self.run_worker(self._follow(), group="follow", exclusive=True, exit_on_error=False)

    async def _follow(self) -> None:
        while True:
            try:
                async for event in self.facade.events.subscribe(
                    after=self.followed_seq, poll_s=FOLLOW_POLL_S
                ):
                    await self._dispatch(event)
                    async with self._followed:
                        self.followed_seq = event.seq
                        self._followed.notify_all()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._chat_screen.notice.error(f"live updates paused: {error_line(exc)}")
                await asyncio.sleep(FOLLOW_RETRY_S)

    async def wait_followed(self, seq: int) -> None:
        """Return once every event up to ``seq`` has been handed to the screens."""
        async with self._followed:
            await self._followed.wait_for(lambda: self.followed_seq >= seq)

    async def _dispatch(self, event: StoredEvent) -> None:
        try:
            await self._chat_screen.on_store_event(event)
        except Exception as exc:
            self._chat_screen.notice.error(exc)
        if event.type in MEMORY_EVENTS:
            for screen in self.screen_stack:
                if isinstance(screen, MemoryBrowserScreen):
                    screen.schedule_reload()

    async def on_unmount(self) -> None:
        try:
            await self.facade.aclose()
        except Exception as exc:  # closing must never turn into a crash on the way out
            self.log.error(f"closing the facade failed: {error_line(exc)}")
