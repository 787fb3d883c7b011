"""The memory browser: listing, filter, edit, history, undo, delete, status filter."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static
from tuikit import SIZE, AppMaker, send, wait_until

from kairox.tui.dialogs import EditBodyScreen, HistoryScreen
from kairox.tui.memory_browser import MemoryBrowserScreen

TWO = (
    'Noted. <memory scope="user" key="editor.font">JetBrains Mono</memory>'
    '<memory scope="workspace" key="build.tool">uv</memory>'
)


async def test_browse_filter_edit_history_undo_delete(make_app: AppMaker) -> None:
    app = make_app([{"text": TWO}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember two things")
        for card in screen.chat.cards():
            await app.facade.memory.approve(card.memory_id)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryBrowserScreen), "browser")
        browser = app.screen
        assert isinstance(browser, MemoryBrowserScreen)
        await wait_until(pilot, lambda: len(browser.rows()) == 2, "two rows")
        assert [r[:4] for r in browser.rows()] == [
            ("user", "accepted", "editor.font", "JetBrains Mono"),
            ("workspace", "accepted", "build.tool", "uv"),
        ]

        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press("b", "u", "i", "l", "d", "enter")
        await wait_until(pilot, lambda: len(browser.rows()) == 1, "the filtered list")
        assert browser.rows()[0][2] == "build.tool"
        assert isinstance(app.focused, DataTable)

        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditBodyScreen), "the editor")
        app.screen.query_one(Input).value = "uv and make"
        await pilot.press("enter")
        await wait_until(pilot, lambda: browser.rows()[0][3] == "uv and make", "the edit")
        assert browser.notice.text == "memory edited"

        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), "history")
        history = str(app.screen.query_one("#history", Static).render())
        assert "propose pending by model" in history and "v1 accept" in history
        assert "v0" not in history and "uv and make" in history
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is browser, "the browser")

        await pilot.press("u")
        await wait_until(pilot, lambda: browser.rows()[0][3] == "uv", "the undo")

        await pilot.press("d")
        await wait_until(pilot, lambda: browser.rows()[0][1] == "deleted", "the delete")
        await pilot.press("u")
        await wait_until(pilot, lambda: browser.rows()[0][1] == "accepted", "the restore")

        await pilot.press("slash", "ctrl+u", "enter", "s", "s")
        await wait_until(pilot, lambda: browser.status_filter is not None, "status filter")
        await wait_until(pilot, lambda: len(browser.rows()) == 2, "accepted rows")
        assert "status: accepted" in str(browser.query_one("#browser-title", Static).render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the chat screen")


async def test_a_key_is_one_row_with_its_rejected_proposal_in_its_history(
    make_app: AppMaker,
) -> None:
    comic = '<memory scope="user" key="editor.font">Comic Sans</memory>'
    mono = '<memory scope="user" key="editor.font">JetBrains Mono</memory>'
    app = make_app([{"text": comic}, {"text": mono}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "my font")
        [first] = screen.chat.cards()
        await app.facade.memory.reject(first.memory_id)
        screen = await send(pilot, "no, another")
        second = next(c for c in screen.chat.cards() if c.memory_id != first.memory_id)
        await app.facade.memory.approve(second.memory_id)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryBrowserScreen), "browser")
        browser = app.screen
        assert isinstance(browser, MemoryBrowserScreen) and browser.status_filter is None  # all
        await wait_until(pilot, lambda: len(browser.rows()) == 1, "one row for the key")
        assert browser.rows()[0][:5] == ("user", "accepted", "editor.font", "JetBrains Mono", "v1")
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), "history")
        history = str(app.screen.query_one("#history", Static).render())
        assert "reject rejected by user" in history and "Comic Sans" in history
