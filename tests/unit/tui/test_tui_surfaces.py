"""The chat screen's first-hour details in the pilot: the wait for the first token, the model
in the header, the footer's way to the cards, decided cards, the meter's width, and the items
of the context expanded to the text the model saw."""

from __future__ import annotations

from textual.widgets import Footer
from tuikit import MARKER, SIZE, AppMaker, ready, send, wait_until

from kairox.core.events import ContextAssembled, TraceItem
from kairox.core.types import ContextSource, MemoryStatus
from kairox.tui.chat_view import AssistantMessage
from kairox.tui.context_items import ContextItemsScreen
from kairox.tui.meter import MAX_WIDTH, reading_of, render_reading


def footer_keys(app: object) -> dict[str, str]:
    from textual.widgets._footer import FooterKey

    assert hasattr(app, "screen")
    return {k.key_display: k.description for k in app.screen.query(FooterKey)}  # type: ignore[attr-defined]


async def test_the_header_names_the_model_and_the_footer_the_way_to_the_cards(
    make_app: AppMaker,
) -> None:
    app = make_app([{"text": "Hi."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: screen.model is not None, "the model")
        status = str(screen.query_one("#status").render())
        spec = app.facade.chat._engine.resolver.model_override
        assert spec is not None and spec.startswith("scripted:/")
        assert f"model scripted:{spec.rsplit('/', 1)[-1]}" in status
        assert app.screen.query(Footer)
        await pilot.pause()
        assert footer_keys(app).get("Tab") == "Cards"


async def test_a_spinner_waits_for_the_first_token(make_app: AppMaker) -> None:
    app = make_app([{"hang": True}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.value = "hello?"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any(m.waiting for m in screen.chat.query(AssistantMessage)),
            "the spinner",
        )
        [reply] = screen.chat.query(AssistantMessage)
        assert reply.waiting == "waiting for the model…"
        first = str(reply.render())
        await wait_until(pilot, lambda: str(reply.render()) != first, "the spinner to turn")
        assert "waiting for the model…" in str(reply.render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.turn_running, "the cancel")
        assert reply.waiting is None


async def test_a_decided_card_offers_no_keys(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        await pilot.press("tab")
        [card] = screen.chat.cards()
        await pilot.pause()
        assert {"a", "r", "e"} <= set(footer_keys(app))
        await pilot.press("a")
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "accept")
        await pilot.pause()
        assert not {"a", "r", "e"} & set(footer_keys(app))
        assert card.check_action("decide", ("reject",)) is False
        await pilot.press("r")  # nothing happens to a decided card
        await pilot.pause()
        assert (await app.facade.memory.show(card.memory_id)).status is MemoryStatus.ACCEPTED
        text = str(card.render())
        assert "accepted by user" in text and "e edit" not in text and "a approve" not in text


def test_the_meter_line_fits_100_columns_with_every_source() -> None:
    big = {s: 123_456 for s in ContextSource}
    trace = ContextAssembled(
        turn=1,
        model="openai:gpt-4o",
        tokenizer="o200k_base",
        estimated=False,
        window=1_000_000,
        headroom=10_000,
        budget=990_000,
        used=sum(big.values()),
        by_source=big,
        items=(TraceItem(source=ContextSource.PROMPT, ref="prompt", tokens=1, included=True),),
        system_prompt="s",
    )
    for threshold in (0.85, 0.5):  # ok and over (with the "compaction at" tail)
        text = render_reading(reading_of(trace, threshold)).plain
        assert len(text) <= MAX_WIDTH, text
        assert text.startswith(f"context {123_456 * len(ContextSource):,}/990,000")
    assert "compaction at 50%" in render_reading(reading_of(trace, 0.5)).plain


async def test_the_items_of_the_context_expand_to_their_text(make_app: AppMaker) -> None:
    app = make_app([{"text": "Hi."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "what did you see?")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextItemsScreen), "the items")
        items = app.screen
        assert isinstance(items, ContextItemsScreen)
        await wait_until(pilot, lambda: items.trace is not None, "the trace")
        tree = items.items_tree
        refs = [n.data.ref for n in tree.root.children if n.data is not None]
        assert refs == [i.ref for i in items.trace.items]  # type: ignore[union-attr]
        prompt = next(n for n in tree.root.children if n.data and n.data.source.value == "prompt")
        prompt.expand()
        await wait_until(pilot, lambda: bool(prompt.children), "the prompt text")
        assert items.expanded_text()[prompt.data.ref] == "what did you see?"  # type: ignore[union-attr]
        system = next(n for n in tree.root.children if n.data and n.data.source.value == "system")
        system.expand()
        await wait_until(pilot, lambda: bool(system.children), "the system text")
        assert "You are Kairox" in items.expanded_text()[system.data.ref]  # type: ignore[union-attr]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "back to the chat")
