"""A proposal the policy refused says why in the TUI: on its card and in the memory browser's
history (issue 37)."""

from __future__ import annotations

from textual.widgets import Static
from tuikit import SIZE, AppMaker, send, wait_until

from kairox.tui.dialogs import HistoryScreen
from kairox.tui.memory_browser import MemoryBrowserScreen

COPIED = '<memory scope="user" key="habit.night_owl">The user usually works late at night.</memory>'
REASON = "the key 'habit.night_owl' is copied from the system prompt's example"


async def test_the_card_and_the_history_say_why_the_policy_refused_it(
    make_app: AppMaker,
) -> None:
    app = make_app([{"text": f"Noted. {COPIED}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "I work late")
        [card] = screen.chat.cards()
        await wait_until(pilot, lambda: "rejected" in str(card.render()), "the decided card")
        assert f"rejected by policy: {REASON}" in " ".join(str(card.render()).split())
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryBrowserScreen), "browser")
        browser = app.screen
        assert isinstance(browser, MemoryBrowserScreen)
        await wait_until(pilot, lambda: len(browser.rows()) == 1, "the rejected row")
        assert browser.rows()[0][1:3] == ("rejected", "habit.night_owl")
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen), "history")
        history = str(app.screen.query_one("#history", Static).render())
        assert "reject rejected by policy" in history
        assert f"reason: {REASON}" in history
