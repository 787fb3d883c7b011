"""Nothing typed is lost around cards, trace lines wrap, context items read as text, and a reloaded
session shows what the live view showed (issue 26)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from tuikit import MARKER, SIZE, AppMaker, ready, send, wait_until

from kairox.core.types import MemoryStatus
from kairox.tui.context_items import ContextItemsScreen

LONG = "remember that the staging deploys go out every second Tuesday after the review"
TOOL_SCRIPT: list[dict[str, object]] = [
    {"tool_call": {"name": "read_file", "arguments": {"path": "notes.txt"}}},
    {"text": "Read it."},
    {"text": "Still here."},
]


def _config(workspace: Path) -> None:
    (workspace / ".kairox").mkdir(exist_ok=True)
    (workspace / ".kairox" / "config.toml").write_text(
        "[retrieval]\nworkspace_index = false\n\n"
        '[profiles.deep]\nmodel = "local"\ncontext_window = 16384\n',
        encoding="utf-8",
    )
    (workspace / "notes.txt").write_text("deploys: Tuesdays\n", encoding="utf-8")


async def test_after_a_decision_the_next_message_is_sent(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}, {"text": "Next reply."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        [card] = screen.chat.cards()
        await pilot.press("tab")
        assert screen.focused is card
        await pilot.press("a")
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "approve")
        await wait_until(pilot, lambda: screen.focused is screen.prompt, "focus on the input")
        finished = screen.turns_finished
        await pilot.press(*"next", "enter")
        await wait_until(pilot, lambda: screen.turns_finished > finished, "the second turn")
        events = await app.facade.events.list(session=screen.session_id)
        said = [e.payload.text for e in events if e.type == "UserMessageAdded"]  # type: ignore[union-attr]
        assert said == ["remember my font", "next"]


async def test_keys_that_are_not_card_keys_go_to_the_input(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}, {"text": "Answered."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        [card] = screen.chat.cards()
        await pilot.press("tab")
        assert screen.focused is card
        await pilot.press("h", "i")  # not a card key: typed into the input
        assert screen.focused is screen.prompt
        assert screen.prompt.value == "hi"
        assert card.record.status is MemoryStatus.PENDING

        await pilot.press("tab", "r")  # a card key still decides
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.REJECTED, "reject")
        await wait_until(pilot, lambda: screen.focused is screen.prompt, "focus on the input")
        await pilot.press("tab")
        assert screen.focused is card
        await pilot.press("a", "enter")  # a decided card has no card keys left: "a", then send
        await wait_until(pilot, lambda: screen.turns_finished == 2, "the second turn")
        events = await app.facade.events.list(session=screen.session_id)
        said = [e.payload.text for e in events if e.type == "UserMessageAdded"]  # type: ignore[union-attr]
        assert said == ["remember my font", "hia"]


async def test_trace_lines_wrap_at_the_panel_edge(make_app: AppMaker) -> None:
    marker = f'<memory scope="user" key="deploy.day">{LONG}</memory>'
    app = make_app([{"text": f"Noted. {marker}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember the deploy day")
        await pilot.press("ctrl+t")
        trace = screen.trace
        [line] = [t for t in trace.text_lines() if t.startswith("MemoryProposed")]
        width = trace.scrollable_content_region.width
        assert 0 < width < len(line)
        await wait_until(pilot, lambda: len(trace.lines) > len(trace.text_lines()), "wrapping")
        shown = [getattr(strip, "text", strip).rstrip() for strip in trace.lines]
        assert all(len(row) <= width for row in shown), shown
        assert " ".join(line.split()) in " ".join(" ".join(shown).split())


async def test_context_items_read_as_text_not_references(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}, {"text": "Mono it is."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "which font do I use for the editor?")
        [card] = screen.chat.cards()
        await app.facade.memory.approve(card.memory_id)
        screen = await send(pilot, "and for the terminal?")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextItemsScreen), "the items")
        items = app.screen
        assert isinstance(items, ContextItemsScreen)
        await wait_until(pilot, lambda: bool(items.items_tree.root.children), "the items")
        labels = {
            node.data.source.value + " " + node.data.ref: node.label.plain
            for node in items.items_tree.root.children
            if node.data is not None and isinstance(node.label, Text)
        }
        history = [v for k, v in labels.items() if k.startswith("history seq:")]
        assert any("which font do I use" in label for label in history), labels
        assert not any("seq:" in label for label in history), labels
        prompt = next(v for k, v in labels.items() if k.startswith("prompt "))
        assert "and for the terminal?" in prompt
        memory = next(v for k, v in labels.items() if k.startswith("memory "))
        assert "user:editor.font" in memory and "mem:" not in memory


async def test_a_reloaded_session_shows_what_the_live_view_showed(
    make_app: AppMaker, workspace: Path
) -> None:
    _config(workspace)
    app = make_app(TOOL_SCRIPT)
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "read my notes")
        await app.facade.chat.switch_profile(screen._sid(), "deep")
        await wait_until(pilot, lambda: screen.profile == "deep", "the switch")
        screen = await send(pilot, "still there?")
        live = screen.chat.transcript()
    assert "⚙ read_file" in live and "profile switched: local → deep" in live

    again = make_app(TOOL_SCRIPT)
    async with again.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.trace.text_lines() != [], "the history")
        await pilot.pause()
        assert screen.chat.transcript() == live
