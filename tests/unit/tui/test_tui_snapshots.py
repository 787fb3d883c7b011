"""SVG snapshots of the main screens: chat with cards, the trace panel, the memory browser.

The terminal size is fixed, the clock is fake, no id is on screen, and the input cursor does not
blink, so the pictures are the same on every run. Update with ``--snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input
from tuikit import MARKER, SIZE, AppMaker, send, wait_until

from kairox.tui.memory_browser import MemoryBrowserScreen

SnapCompare = Callable[..., bool]

FIRST = f"Noted. {MARKER}"
SECOND = (
    "From your notes: "
    '<memory scope="user" key="editor.font">Iosevka Term</memory>'
    '<memory scope="workspace" key="build.tool">uv</memory>'
    "Both saved for your approval."
)
SCRIPT: list[dict[str, object]] = [
    {"text": FIRST},
    {"tool_call": {"name": "read_file", "arguments": {"path": "notes.txt"}}},
    {"text": SECOND},
]


def quiet_workspace(workspace: Path) -> None:
    (workspace / ".kairox").mkdir(exist_ok=True)
    (workspace / ".kairox" / "config.toml").write_text(
        "[retrieval]\nworkspace_index = false\n", encoding="utf-8"
    )
    (workspace / "notes.txt").write_text("font: Iosevka Term\nbuild: uv\n", encoding="utf-8")


def steady(pilot: Pilot[None]) -> None:
    for widget in pilot.app.screen.query(Input):
        widget.cursor_blink = False


def two_turns(then: Callable[[Pilot[None]], Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    async def run_before(pilot: Pilot[None]) -> None:
        screen = await send(pilot, "my editor font is JetBrains Mono")
        [card] = screen.chat.cards()
        await pilot.press("tab", "a")
        await wait_until(pilot, lambda: card.record.status.value == "accepted", "accept")
        screen = await send(pilot, "read notes.txt and remember what matters")
        await wait_until(pilot, lambda: len(screen.chat.cards()) == 3, "three cards")
        await then(pilot)
        steady(pilot)
        await pilot.pause()

    return run_before


async def focus_newest_pending(pilot: Pilot[None]) -> None:
    await pilot.press("tab")


async def open_trace(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+t")
    screen = pilot.app.screen
    await wait_until(
        pilot,
        lambda: any("MemoryProposed workspace" in line for line in screen.trace.text_lines()),  # type: ignore[attr-defined]
        "the trace to catch up",
    )


async def open_browser(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+n")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, MemoryBrowserScreen), "browser")
    browser = pilot.app.screen
    assert isinstance(browser, MemoryBrowserScreen)
    await wait_until(pilot, lambda: len(browser.rows()) == 3, "three rows")


def test_chat_with_cards(snap_compare: SnapCompare, make_app: AppMaker, workspace: Path) -> None:
    quiet_workspace(workspace)
    app = make_app(SCRIPT)
    assert snap_compare(app, terminal_size=SIZE, run_before=two_turns(focus_newest_pending))


def test_trace_panel(snap_compare: SnapCompare, make_app: AppMaker, workspace: Path) -> None:
    quiet_workspace(workspace)
    app = make_app(SCRIPT)
    assert snap_compare(app, terminal_size=SIZE, run_before=two_turns(open_trace))


def test_memory_browser(snap_compare: SnapCompare, make_app: AppMaker, workspace: Path) -> None:
    quiet_workspace(workspace)
    app = make_app(SCRIPT)
    assert snap_compare(app, terminal_size=SIZE, run_before=two_turns(open_browser))
