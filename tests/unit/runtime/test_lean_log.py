"""A lean log: streamed reply pieces are coalesced before they are written (at most one
``ModelTokenDelta`` per 50 ms or per 256 characters, always one at the end), the visible stream is
the same text (``kairox events`` hiding deltas unless ``--deltas`` is
``tests/integration/cli/test_events_cli.py``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from kairox.app import AppFacade
from kairox.runtime.deltas import DeltaCoalescer
from kairox.services import Services
from kairox.testing.clock import FakeClock

REPLY = "".join(f"word{i:04d} " for i in range(114))[:1024]


def test_the_coalescer_writes_the_first_piece_then_by_size_or_time() -> None:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    pending = DeltaCoalescer(clock.now)
    assert pending.feed("He") == "He"  # the first token is never held back
    assert pending.feed("llo") is None
    assert pending.feed(" wor") is None
    clock.advance(0.05)
    assert pending.feed("ld") == "llo world"  # 50 ms since the last write
    assert pending.feed("x" * 255) is None
    assert pending.feed("y") == "x" * 255 + "y"  # 256 characters waiting
    assert pending.feed("tail") is None
    assert pending.due() == 0.05  # a stalled stream wakes the turn to write it
    clock.advance(0.02)
    assert pending.due() is not None and abs(pending.due() - 0.03) < 1e-9  # type: ignore[operator]
    assert pending.flush() == "tail" and pending.flush() is None  # always one at the end
    assert pending.due() is None


async def test_a_stalled_stream_never_holds_text_back(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"deltas": ["Wor", "king", " on it"], "hang": True}) + "\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    facade = AppFacade(Services.open(tmp_path / "home"), model=f"scripted:{script}")
    try:
        await facade.chat.open("stall", workspace=workspace)
        streamed: list[str] = []
        shown = asyncio.Event()

        async def consume() -> None:
            async for update in facade.chat.send("stall", "go"):
                payload = getattr(update, "payload", None)
                if getattr(payload, "type", "") == "ModelTokenDelta":
                    streamed.append(payload.text)  # type: ignore[union-attr]
                    if "".join(streamed) == "Working on it":
                        shown.set()

        consumer = asyncio.create_task(consume())
        await asyncio.wait_for(shown.wait(), timeout=60)  # the model hangs; the text is out
        assert await facade.chat.cancel("stall") is True
        await consumer
    finally:
        await facade.aclose()
        facade.close()


async def test_a_1024_character_reply_is_a_handful_of_rows(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": REPLY, "chunk": 1}) + "\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    facade = AppFacade(
        Services.open(tmp_path / "home", clock=FakeClock()), model=f"scripted:{script}"
    )
    try:
        await facade.chat.open("lean", workspace=workspace)
        streamed = []
        async for update in facade.chat.send("lean", "say it"):
            payload = getattr(update, "payload", None)
            if getattr(payload, "type", "") == "ModelTokenDelta":
                streamed.append(payload.text)  # type: ignore[union-attr]
        assert "".join(streamed) == REPLY  # the visible stream is unchanged
        rows = [e for e in await facade.events.list(session="lean")]
        deltas = [e.payload.text for e in rows if e.type == "ModelTokenDelta"]  # type: ignore[union-attr]
        assert "".join(deltas) == REPLY
        # The first character, then 256 at a time: 5 rows for 1,024 streamed pieces (one more
        # only if the stream paused 50 ms between two pieces, which a scripted model never does).
        assert 5 <= len(deltas) <= 8
        hidden = await facade.events.list(session="lean", deltas=False)
        assert [e.seq for e in hidden] == [e.seq for e in rows if e.type != "ModelTokenDelta"]
    finally:
        await facade.aclose()
        facade.close()


async def test_a_cancelled_reader_stops_even_while_items_keep_arriving() -> None:
    """Cancelling the turn that reads a busy stream ends it: the cancellation is never lost to
    an item that arrives at the same moment (Python 3.11's ``wait_for`` loses it)."""
    from kairox.runtime.deltas import paced

    async def endless() -> AsyncIterator[str]:
        while True:
            await asyncio.sleep(0)
            yield "x"

    async def consume() -> None:
        async for _ in paced(endless(), lambda: 0.05):
            pass

    for _ in range(20):
        task = asyncio.create_task(consume())
        for _ in range(30):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait((task,), timeout=5)
        assert done and task.cancelled()
