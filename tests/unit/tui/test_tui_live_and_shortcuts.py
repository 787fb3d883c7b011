"""Live updates from another process, compaction from the shortcut, cancel, and profile switch."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tuikit import MARKER, SIZE, AppMaker, ready, send, wait_until

from kairox.core.types import MemoryStatus
from kairox.tui.memory_browser import MemoryBrowserScreen
from kairox.tui.profile_picker import ProfilePicker
from kairox.tui.session_events import QUEUED_COMPACTION

COMPACTION_END = (
    "ContextCompactionCompleted",
    "ContextCompactionFailed",
    "ContextCompactionSkipped",
)


async def kairox(*args: str) -> str:
    """Run the real CLI in another process (it shares the test's KAIROX_HOME)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kairox",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_decisions_and_edits_from_another_process_show_live(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}, {"text": "Comic Mono it is."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        [card] = screen.chat.cards()
        await kairox("memory", "approve", card.memory_id)
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.ACCEPTED, "approve")
        assert "accepted by user" in str(card.render())

        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryBrowserScreen), "browser")
        browser = app.screen
        assert isinstance(browser, MemoryBrowserScreen)
        await wait_until(pilot, lambda: len(browser.rows()) == 1, "the browser rows")
        await kairox("memory", "edit", card.memory_id, "--body", "Comic Mono")
        await wait_until(
            pilot, lambda: browser.rows()[0][3] == "Comic Mono", "the edit in the browser"
        )
        await wait_until(pilot, lambda: card.record.body == "Comic Mono", "the edit on the card")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the chat screen")
        assert "Comic Mono" in str(card.render())
        assert any(line.startswith("MemoryEdited (edit)") for line in screen.trace.text_lines())
        # The next turn sees the value edited in the other process.
        screen = await send(pilot, "which font do I use?")
        prompt = await app.facade.context.replay("main", 2)
        assert any("Comic Mono" in message.content for message in prompt)
        assert not any("JetBrains Mono" in message.content for message in prompt)


async def test_compact_now_from_the_shortcut(make_app: AppMaker) -> None:
    lines: list[dict[str, object]] = [{"text": f"Reply number {i}. " * 8} for i in range(3)]
    lines.append({"text": "The user said hello three times.", "purpose": "summary"})
    app = make_app(lines)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(3):
            screen = await send(pilot, f"hello {i} " * 8)
        await pilot.press("ctrl+o")
        await wait_until(
            pilot,
            lambda: any(line.startswith(COMPACTION_END) for line in screen.trace.text_lines()),
            "the end of the compaction",
        )
        seen = screen.trace.text_lines()
        assert "ContextCompactionStarted (manual)" in seen
        assert "ContextCompactionCompleted" in seen
        assert any(line.startswith("CompactionSummary seq ") for line in seen)
        await wait_until(
            pilot, lambda: screen.notice.text == "compaction completed", "the completed notice"
        )
        assert "earlier history compacted into a summary" in screen.chat.transcript()


async def test_compaction_queues_behind_a_running_turn(make_app: AppMaker) -> None:
    lines: list[dict[str, object]] = [{"text": f"Reply number {i}. " * 8} for i in range(3)]
    lines.append({"text": "thinking", "hang": True})
    lines.append({"text": "The user said hello three times.", "purpose": "summary"})
    app = make_app(lines)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(3):
            screen = await send(pilot, f"hello {i} " * 8)
        screen.prompt.value = "take your time"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "thinking" in screen.chat.transcript(), "the reply")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: screen.notice.text == QUEUED_COMPACTION, "queued notice")
        await wait_until(
            pilot,
            lambda: "1 queued" in str(screen.query_one("#status").render()),
            "the queue in the status line",
        )
        assert not any(line.startswith("ContextCompaction") for line in screen.trace.text_lines())
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.turn_running, "the cancel")
        assert screen.prompt.value == "take your time"
        await wait_until(
            pilot,
            lambda: any(line.startswith(COMPACTION_END) for line in screen.trace.text_lines()),
            "the queued compaction to finish",
        )
        seen = screen.trace.text_lines()
        cancelled = seen.index("TurnFailed turn 4: cancelled by the user")
        started = seen.index("ContextCompactionStarted (manual)")
        assert cancelled < started
        assert "ContextCompactionCompleted" in seen
        assert "compaction completed" in screen.notice.text
        assert "earlier history compacted" in screen.chat.transcript()


async def test_switch_profile_with_the_picker(make_app: AppMaker, workspace: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(
        'default_profile = "fast"\n\n'
        '[profiles.fast]\nmodel = "local"\ncontext_window = 8192\nheadroom = 1024\n\n'
        '[profiles.deep]\nmodel = "local"\ncontext_window = 16384\nheadroom = 2048\n',
        encoding="utf-8",
    )
    app = make_app([{"text": "ok"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.profile == "fast"
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: isinstance(app.screen, ProfilePicker), "the picker")
        await pilot.press("up", "enter")
        await wait_until(pilot, lambda: screen.profile == "deep", "the switch")
        assert (await app.facade.sessions.get("main")).profile == "deep"
        assert "profile deep" in str(screen.query_one("#status").render())
        await wait_until(
            pilot,
            lambda: "ProfileSwitched fast -> deep" in screen.trace.text_lines(),
            "ProfileSwitched in the trace",
        )
        screen = await send(pilot, "hello")
        assert screen.meter.reading is not None
        assert screen.meter.reading.budget == 16384 - 2048


async def test_archive_and_unarchive_from_the_shortcut(make_app: AppMaker) -> None:
    app = make_app([{"text": "Hello."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "hi")
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: "archived" in screen.notice.text, "the archive notice")
        assert (await app.facade.sessions.get("main")).archived
        assert await app.facade.sessions.list() == []
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: "unarchived" in screen.notice.text, "the unarchive")
        assert not (await app.facade.sessions.get("main")).archived


async def test_main_of_another_workspace_is_not_this_ones(
    make_app: AppMaker, tmp_path: Path
) -> None:
    from kairox.core.events import UserMessageAdded
    from kairox.core.ids import workspace_id_for

    other = tmp_path / "other"
    other.mkdir()
    app = make_app([{"text": "Hello."}])
    theirs = await app.facade.chat.open("main", workspace=other)
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "hi")
        assert screen.session_id is not None and screen.session_id != theirs.id
        mine = await app.facade.sessions.get(screen.session_id)
        assert (mine.name, mine.workspace_id) == ("main", workspace_id_for(make_app.workspace))
        said = await app.facade.events.list(session=theirs.id)
        assert not [e for e in said if isinstance(e.payload, UserMessageAdded)]
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: "archived" in screen.notice.text, "the archive notice")
        assert (await app.facade.sessions.get(mine.id)).archived
        assert not (await app.facade.sessions.get(theirs.id)).archived
