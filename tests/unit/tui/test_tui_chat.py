"""The chat flow in the pilot: send, stream, cards, decisions with a/r/e, trace and meter."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from tuikit import MARKER, SIZE, AppMaker, send, wait_until

from kairox.core.types import MemoryStatus
from kairox.tui.cards import ProposalCard
from kairox.tui.dialogs import EditBodyScreen

TWO_PROPOSALS = (
    'Noted. <memory scope="user" key="editor.font">JetBrains Mono</memory>'
    '<memory scope="workspace" key="build.tool">uv</memory> Anything else?'
)


async def test_send_streams_the_reply_without_markers(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Hello there! {MARKER} Done.", "chunk": 3}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "my editor font is JetBrains Mono")
        transcript = screen.chat.transcript()
        assert "you my editor font is JetBrains Mono" in transcript
        assert "kairox Hello there!  Done." in transcript
        assert "<memory" not in transcript and "</memory>" not in transcript
        assert screen.prompt.value == ""
        assert screen.notice.level == "info"
        [card] = screen.chat.cards()
        assert card.record.status is MemoryStatus.PENDING
        assert card.border_title == "memory · user · editor.font"
        assert "JetBrains Mono" in str(card.render())


async def test_approve_with_a_on_the_focused_card(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        await pilot.press("tab")
        [card] = screen.chat.cards()
        assert screen.focused is card
        await pilot.press("a")
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "accept")
        stored = await app.facade.memory.show(card.memory_id)
        assert stored.status is MemoryStatus.ACCEPTED
        assert stored.body == "JetBrains Mono"
        assert card.border_subtitle == "accepted"
        assert "memory approved: user editor.font" in screen.notice.text


async def test_reject_with_r(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        await pilot.press("tab", "r")
        [card] = screen.chat.cards()
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.REJECTED, "reject")
        assert (await app.facade.memory.show(card.memory_id)).status is MemoryStatus.REJECTED
        assert "rejected" in str(card.render())


async def test_edit_with_e_then_approve(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        await pilot.press("tab", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditBodyScreen), "the edit dialog")
        editor = app.screen.query_one(Input)
        assert editor.value == "JetBrains Mono"
        editor.value = "Iosevka Term"
        await pilot.press("enter")
        [card] = screen.chat.cards()
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "accept")
        stored = await app.facade.memory.show(card.memory_id)
        assert stored.body == "Iosevka Term"
        assert "Iosevka Term" in str(card.render())
        assert "(edited)" in str(card.render())


async def test_escape_in_the_edit_dialog_changes_nothing(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        await pilot.press("tab", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditBodyScreen), "the edit dialog")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the chat screen")
        [card] = screen.chat.cards()
        assert (await app.facade.memory.show(card.memory_id)).status is MemoryStatus.PENDING


async def test_tab_moves_between_cards_and_back_to_the_prompt(make_app: AppMaker) -> None:
    app = make_app([{"text": TWO_PROPOSALS}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember two things")
        first, second = screen.chat.cards()
        assert screen.focused is screen.prompt
        await pilot.press("tab")
        assert screen.focused is first
        await pilot.press("tab")
        assert screen.focused is second
        await pilot.press("r")
        await wait_until(pilot, lambda: second.record.status is MemoryStatus.REJECTED, "reject")
        assert first.record.status is MemoryStatus.PENDING
        await wait_until(pilot, lambda: screen.focused is screen.prompt, "focus back on the input")
        await pilot.press("tab")  # from the prompt, Tab goes to the first pending card
        assert screen.focused is first
        await pilot.press("shift+tab")
        assert screen.focused is screen.prompt
        await pilot.press("shift+tab")
        assert screen.focused is second


async def test_trace_shows_the_accepted_memory_with_scope_and_key(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        await pilot.press("ctrl+t")
        assert screen.trace.display
        await pilot.press("tab", "a")
        await wait_until(
            pilot,
            lambda: any(
                line.startswith("MemoryAccepted user editor.font")
                for line in screen.trace.text_lines()
            ),
            "MemoryAccepted in the trace",
        )
        lines = screen.trace.text_lines()
        assert any(line.startswith("MemoryProposed user editor.font") for line in lines)
        assert any(line.startswith("ContextAssembled turn 1:") for line in lines)
        await pilot.press("ctrl+t")
        assert not screen.trace.display


async def test_meter_shows_used_and_budget_by_source(make_app: AppMaker) -> None:
    app = make_app([{"text": "Hi."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "hello")
        reading = screen.meter.reading
        assert reading is not None
        trace = await app.facade.events.list(session="main")
        [assembled] = [e.payload for e in trace if e.type == "ContextAssembled"]
        assert reading.used == assembled.used  # type: ignore[union-attr]
        assert reading.budget == assembled.budget  # type: ignore[union-attr]
        assert dict(reading.by_source) == {
            s: n
            for s, n in assembled.by_source.items()  # type: ignore[union-attr]
            if n
        }
        assert f"{reading.used:,}/{reading.budget:,}" in str(screen.meter.render())


async def test_session_memories_are_auto_accepted_cards(make_app: AppMaker) -> None:
    app = make_app([{"text": 'Ok <memory scope="session" key="topic">tui</memory>'}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "we talk about the tui")
        [card] = screen.chat.cards()
        assert isinstance(card, ProposalCard)
        assert card.record.status is MemoryStatus.ACCEPTED
        assert "accepted by policy" in str(card.render())


async def test_restart_shows_history_and_current_card_state(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        [card] = screen.chat.cards()
        await app.facade.memory.approve(card.memory_id, body="Fira Code")
    again = make_app([{"text": "unused"}])
    async with again.run_test(size=SIZE) as pilot:
        screen = again.chat_screen
        await wait_until(pilot, lambda: len(screen.chat.cards()) == 1, "the card from history")
        transcript = screen.chat.transcript()
        assert "you remember my font" in transcript
        assert "kairox Sure." in transcript
        assert "[accepted] Fira Code" in transcript


async def test_forget_with_f_on_a_session_memory_accepted_with_its_taint(
    make_app: AppMaker, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("the deploy key lives in the vault\n")
    app = make_app(
        [
            {"tool_call": {"name": "read_file", "arguments": {"path": "notes.md"}}},
            {"text": 'Noted. <memory scope="session">the key is in the vault</memory>'},
        ]
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "read my notes")
        [card] = screen.chat.cards()
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "accept")
        assert card.record.carries_taint
        rendered = str(card.render())
        assert "⚠ proposed after untrusted input: tool_result" in rendered
        assert "f forget" in rendered
        await pilot.press("tab")
        assert screen.focused is card
        await pilot.press("f")
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.DELETED, "forget")
        assert (await app.facade.memory.show(card.memory_id)).status is MemoryStatus.DELETED
        assert "memory forgotten: session -" in screen.notice.text
