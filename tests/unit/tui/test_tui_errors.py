"""Errors become one-line notices; the app keeps running and the typed message is kept."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

import pytest
from tuikit import MARKER, SIZE, AppMaker, ready, send, wait_until

from helpers import write_config
from kairox.core.types import MemoryStatus


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_a_scripted_model_error_is_a_notice_and_the_message_is_kept(
    make_app: AppMaker,
) -> None:
    app = make_app([{"error": "the model fell over"}, {"text": "Back again."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "first try")
        assert screen.notice.level == "error"
        assert "the model fell over" in screen.notice.text
        assert "\n" not in screen.notice.text
        assert screen.prompt.value == "first try"
        assert not screen.turn_running
        # The app still works: the kept message can be sent again.
        screen = await send(pilot, screen.prompt.value)
        assert "kairox Back again." in screen.chat.transcript()
        assert screen.prompt.value == ""


async def test_a_dead_openai_endpoint_is_a_notice(
    make_app: AppMaker, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAIROX_TEST_OPENAI_KEY", "sk-test")
    # Endpoints and key variables come from the user's own config, never the workspace's.
    user_config = workspace.parent / "user-config.toml"
    monkeypatch.setenv("KAIROX_CONFIG", str(user_config))
    user_config.write_text(
        f"""
default_profile = "dead"

[profiles.dead]
model = "openai:gpt-x"
base_url = "http://127.0.0.1:{closed_port()}/v1"
api_key_env = "KAIROX_TEST_OPENAI_KEY"
context_window = 8192
headroom = 1024
timeout_s = 5
""",
        encoding="utf-8",
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "is anyone there?")
        assert screen.notice.level == "error"
        assert "127.0.0.1" in screen.notice.text
        assert screen.prompt.value == "is anyone there?"
        assert app.is_running


async def test_an_overflowing_prompt_is_a_notice(make_app: AppMaker, workspace: Path) -> None:
    write_config(
        workspace,
        """
default_profile = "tiny"

[profiles.tiny]
model = "local"
context_window = 96
headroom = 32
""",
    )
    app = make_app([{"text": "never sent"}])
    async with app.run_test(size=SIZE) as pilot:
        long = "please read all of this " * 40
        screen = await send(pilot, long)
        assert screen.notice.level == "error"
        assert "context overflow" in screen.notice.text
        assert screen.prompt.value == long.strip()


async def test_deciding_twice_from_the_card_is_a_notice_not_a_crash(make_app: AppMaker) -> None:
    app = make_app([{"text": f"Sure. {MARKER}"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await send(pilot, "remember my font")
        [card] = screen.chat.cards()
        await app.facade.memory.reject(card.memory_id)
        await wait_until(pilot, lambda: card.record.status is MemoryStatus.REJECTED, "reject")
        await pilot.press("tab")
        assert card.check_action("decide", ("approve",)) is False  # a decided card offers no a
        card.post_message(card.Decision(card, "approve"))  # a stale key press still arrives
        await wait_until(pilot, lambda: screen.notice.level == "error", "the error notice")
        assert "cannot approve" in screen.notice.text
        assert app.is_running


async def test_sending_while_a_turn_runs_keeps_the_new_message(make_app: AppMaker) -> None:
    app = make_app([{"text": "thinking", "hang": True}])
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.session_id is not None, "open")
        screen.prompt.value = "first"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "thinking" in screen.chat.transcript(), "the reply")
        screen.prompt.value = "second"
        await pilot.press("enter")
        assert screen.prompt.value == "second"
        assert "turn is running" in screen.notice.text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.turn_running, "the cancel")
        assert "cancel" in screen.notice.text
        assert screen.prompt.value == "second"


async def test_a_session_busy_in_another_process_is_a_notice(
    make_app: AppMaker, workspace: Path, tmp_path: Path
) -> None:
    hang = tmp_path / "hang.jsonl"
    hang.write_text(json.dumps({"text": "busy", "hang": True}) + "\n", encoding="utf-8")
    app = make_app([{"text": "never reached"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        other = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "kairox",
            "send",
            "--workspace",
            str(workspace),
            "--session",
            "main",
            "--model",
            f"scripted:{hang}",
            "hold the session",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            await wait_until(
                pilot,
                lambda: any(
                    line.startswith("ModelCallStarted") for line in screen.trace.text_lines()
                ),
                "the other process to hold the session",
            )
            screen = await send(pilot, "am I blocked?")
            assert screen.notice.level == "error"
            assert screen.notice.text.startswith("session busy: 'main'")
            assert screen.prompt.value == "am I blocked?"
        finally:
            other.kill()
            await other.wait()


async def test_an_untrusted_workspace_config_is_a_warning_naming_the_ignored_keys(
    make_app: AppMaker, workspace: Path
) -> None:
    write_config(
        workspace,
        '[profiles.local]\nmodel = "local"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "AWS_SECRET"\n',
    )
    app = make_app([{"text": "hi"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await wait_until(pilot, lambda: "kairox trust" in screen.notice.text, "the trust notice")
        assert screen.notice.level == "warning"
        assert "profiles.local.api_key_env, profiles.local.base_url" in screen.notice.text
