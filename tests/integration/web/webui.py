"""Helpers of the browser tests: one page on one server, and the page actions tests repeat."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from kairox.web import WebServer


@dataclass
class Ui:
    """One browser page on one server, with what the page did wrong along the way."""

    server: WebServer
    page: Page
    home: Path
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def open(self, path: str = "/") -> None:
        """Open ``path``; the first visit goes through the printed URL (token -> cookie)."""
        if not self.page.url.startswith(self.server.base_url):
            self.page.goto(self.server.url)
        self.page.goto(self.server.base_url + path)
        expect(self.page.locator("#live")).to_have_attribute("data-status", "live")

    def kairox(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the CLI in another process against the same home."""
        env = {**os.environ, "KAIROX_HOME": str(self.home)}
        return subprocess.run(
            [sys.executable, "-m", "kairox", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=True,
        )


MakeUi = Callable[..., Ui]


def start_session(page: Page, name: str) -> None:
    page.fill("#new-session-name", name)
    page.click("#start-session")
    expect(page.locator("#session-title")).to_have_text(name)


def send(page: Page, text: str) -> None:
    page.fill("#message", text)
    page.click("#send")


def card(page: Page, key: str) -> Locator:
    """The proposal card of ``key`` in the chat transcript."""
    return page.locator(".card", has=page.locator(".key", has_text=key))


def memory_row(page: Page, key: str) -> Locator:
    """The row of ``key`` in the memory browser."""
    return page.locator(".memory-row", has=page.locator(".key", has_text=key))
