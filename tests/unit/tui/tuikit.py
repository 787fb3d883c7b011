"""Helpers for driving the chat app with Textual's pilot and the scripted model."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from kairox.app import AppFacade
from kairox.testing import FakeClock
from kairox.tui import ChatOptions
from kairox.tui.app import KairoxApp
from kairox.tui.chat_screen import ChatScreen

SIZE = (120, 40)
MARKER = '<memory scope="user" key="editor.font">JetBrains Mono</memory>'


def write_lines(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


class AppMaker:
    """Builds apps on a fresh facade per call and closes every facade at teardown."""

    def __init__(self, tmp_path: Path, workspace: Path) -> None:
        self.tmp_path = tmp_path
        self.workspace = workspace
        self.facades: list[AppFacade] = []

    def __call__(
        self,
        lines: list[dict[str, object]] | None = None,
        *,
        model: str | None = None,
        session: str = "main",
        profile: str | None = None,
    ) -> KairoxApp:
        if lines is not None:
            script = write_lines(self.tmp_path / f"script-{len(self.facades)}.jsonl", lines)
            model = f"scripted:{script}"
        facade = AppFacade.open(model=model, clock=FakeClock())
        self.facades.append(facade)
        options = ChatOptions(session=session, workspace=self.workspace, profile=profile)
        return KairoxApp(facade, options)

    def close(self) -> None:
        for facade in self.facades:
            facade.close()


async def wait_until(
    pilot: Pilot[None], predicate: Callable[[], bool], what: str, limit_s: float = 30.0
) -> None:
    """Let the app run until ``predicate`` holds; fail with ``what`` after ``limit_s`` seconds."""
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def screen_of(pilot: Pilot[None]) -> ChatScreen:
    app = pilot.app
    assert isinstance(app, KairoxApp)
    return app.chat_screen


async def ready(pilot: Pilot[None]) -> ChatScreen:
    """Wait until the session is open and the app follows the log."""
    screen = screen_of(pilot)
    await wait_until(pilot, lambda: screen.session_id is not None, "the session to open")
    return screen


async def send(pilot: Pilot[None], text: str) -> ChatScreen:
    """Type ``text``, press enter, and wait until the turn has finished."""
    screen = await ready(pilot)
    screen.prompt.focus()
    screen.prompt.value = text
    finished = screen.turns_finished
    await pilot.press("enter")
    await wait_until(pilot, lambda: screen.turns_finished > finished, "the turn to finish")
    await pilot.pause()
    return screen
