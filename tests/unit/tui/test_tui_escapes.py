"""The TUI shows the model's and the store's control characters, it does not obey them: a reply,
a proposal card and the memory browser render ESC, bidi and ``\\r`` as visible escapes."""

from __future__ import annotations

from tuikit import SIZE, AppMaker, send, wait_until

from kairox.tui.cards import ProposalCard
from kairox.tui.chat_view import AssistantMessage

HOSTILE = "\x1b]52;c;ZXZpbA==\x07clip \rover \u202eevil"
OBEYED = ("\x1b", "\x07", "\r", "\u202e")


def _inert(text: str) -> bool:
    return not any(char in text for char in OBEYED)


async def test_a_reply_and_a_card_render_control_characters_visibly(make_app: AppMaker) -> None:
    marker = f'<memory scope="user" key="k">{HOSTILE}</memory>'
    app = make_app([{"text": f"{HOSTILE} {marker}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "hi")
        await wait_until(pilot, lambda: bool(screen.chat.cards()), "the proposal card")
        [reply] = list(screen.query(AssistantMessage))
        [card] = list(screen.query(ProposalCard))
        for widget in (reply, card):
            shown = str(widget.render())
            assert _inert(shown), repr(shown)
            assert "\\x1b]52;c;ZXZpbA==\\x07clip" in shown
            assert "\\u202eevil" in shown
