"""Profiles, config errors, the actor's queue and state, cancel, and dead endpoints."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import kx, write_config
from kairox.app import AppFacade, TurnDone
from kairox.core.events import AssistantMessageCompleted, TurnFailed, UserMessageAdded
from kairox.core.types import SessionState
from kairox.runtime.actor import SendMessage

Script = Callable[..., str]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_config_show_says_where_values_come_from(workspace: Path, script: Script) -> None:
    path = write_config(
        workspace,
        f'default_profile = "fast"\n[profiles.fast]\n'
        f'model = "{script({"text": "x"})}"\ncontext_window = 4096\n',
    )
    rows = json.loads(kx("config", "show", "--workspace", str(workspace), "--json").stdout)
    by_key = {r["key"]: r for r in rows}
    assert by_key["default_profile"]["value"] == "fast"
    assert by_key["default_profile"]["source"] == str(path)
    assert by_key["profiles.fast.context_window"]["source"] == str(path)
    assert by_key["memory.max_proposals_per_turn"]["source"] == "defaults"


def test_config_errors_name_file_key_and_fix(workspace: Path) -> None:
    path = write_config(workspace, "[profiles.x]\nmodel = 'local'\ncontext_windw = 10\n")
    result = kx("config", "show", "--workspace", str(workspace))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert str(path) in line and "profiles.x.context_windw" in line and "Fix:" in line
    write_config(workspace, "this is = = not toml")
    result = kx("config", "show", "--workspace", str(workspace))
    assert result.returncode == 1 and "invalid TOML" in result.stderr
    write_config(workspace, 'default_profile = "nope"\n')
    result = kx("send", "--workspace", str(workspace), "hi")
    assert result.returncode == 1 and "nope" in result.stderr


def test_session_remembers_profile_until_switched(workspace: Path, script: Script) -> None:
    # The n-th reply call of a session takes the n-th line, whichever script serves it.
    a = script({"text": "from a"}, {"text": "a again"})
    b = script({"text": "unused"}, {"text": "unused"}, {"text": "from b"})
    write_config(workspace, f'[profiles.a]\nmodel = "{a}"\n[profiles.b]\nmodel = "{b}"\n')
    first = kx("send", "--workspace", str(workspace), "--session", "p", "--profile", "a", "hi")
    assert first.stdout.strip() == "from a"
    again = kx("send", "--workspace", str(workspace), "--session", "p", "hello")
    assert again.stdout.strip() == "a again"
    assert (
        kx("profile", "use", "b", "--workspace", str(workspace), "--session", "p").returncode == 0
    )
    third = kx("send", "--workspace", str(workspace), "--session", "p", "hey")
    assert third.stdout.strip() == "from b"
    events = json.loads(
        kx("events", "--workspace", str(workspace), "--session", "p", "--json").stdout
    )
    switched = [e["payload"] for e in events if e["type"] == "ProfileSwitched"]
    assert switched == [{"type": "ProfileSwitched", "from_profile": "a", "to_profile": "b"}]


def test_model_override_keeps_the_profile_window(workspace: Path, script: Script) -> None:
    write_config(
        workspace,
        'default_profile = "tiny"\n[profiles.tiny]\nmodel = "openai:gpt-4o"\n'
        "context_window = 3000\nheadroom = 500\n",
    )
    assert kx("trust", str(workspace)).returncode == 0  # an untrusted repo may not pick OpenAI
    model = script({"text": "ok"})
    assert kx("send", "--workspace", str(workspace), "--model", model, "hi").returncode == 0
    data = json.loads(
        kx("context", "--workspace", str(workspace), "--session", "main", "--json").stdout
    )
    assert data["window"] == 3000 and data["budget"] == 2500
    assert data["model"] == model


def test_dead_endpoint_fails_the_turn_in_one_line(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Endpoints come from the user's own config (a workspace file may not choose them).
    user_config = tmp_path / "user.toml"
    monkeypatch.setenv("KAIROX_CONFIG", str(user_config))
    user_config.write_text(
        f'default_profile = "remote"\n[profiles.remote]\n'
        f'model = "openai:gpt-4o-mini"\n'
        f'base_url = "http://127.0.0.1:{closed_port()}/v1"\n',
    )
    result = kx("send", "--workspace", str(workspace), "are you there?")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    # One error line, and off a terminal no spinner written as text before it.
    assert len(lines) == 1 and lines[0].startswith("error:") and "cannot reach" in lines[0]
    events = json.loads(kx("events", "--json").stdout)
    types = [e["type"] for e in events]
    assert "UserMessageAdded" in types and "TurnFailed" in types
    assert "AssistantMessageCompleted" not in types


async def test_commands_queue_behind_a_turn_and_cancel_stops_it(
    workspace: Path, script: Script, kairox_home: Path
) -> None:
    model = script({"text": "partial ", "hang": True}, {"text": "after cancel"})
    facade = AppFacade.open(kairox_home, model=model)
    try:
        await facade.chat.open("q", workspace=workspace)
        seen: list[object] = []
        streaming = asyncio.Event()

        async def consume() -> None:
            async for update in facade.chat.send("q", "long one"):
                seen.append(update)
                if getattr(getattr(update, "payload", None), "type", "") == "ModelTokenDelta":
                    streaming.set()

        consumer = asyncio.create_task(consume())
        await asyncio.wait_for(streaming.wait(), timeout=60)
        assert facade.chat.state("q") is SessionState.RUNNING_TURN
        queued = facade.chat._engine.actor("q").enqueue(SendMessage("next"))
        assert facade.chat.queued("q") == 1
        assert await facade.chat.cancel("q") is True
        await consumer
        outcome = await queued
        assert outcome.reply == "after cancel"
        events = await facade.events.list(session="q")
        kinds = [(type(e.payload).__name__, getattr(e.payload, "turn", None)) for e in events]
        assert ("TurnFailed", 1) in kinds
        failed = next(e.payload for e in events if isinstance(e.payload, TurnFailed))
        assert failed.reason == "cancelled by the user"
        completed = [
            e.payload.turn for e in events if isinstance(e.payload, AssistantMessageCompleted)
        ]
        assert completed == [2]  # the cancelled turn left no completed message
        users = [e.payload.text for e in events if isinstance(e.payload, UserMessageAdded)]
        assert users == ["long one", "next"]
        assert isinstance(seen[-1], TurnDone)
        assert facade.chat.state("q") is SessionState.IDLE
    finally:
        await facade.aclose()
        facade.close()


async def test_send_streams_the_proposal_events(
    workspace: Path, script: Script, kairox_home: Path
) -> None:
    marker = '<memory scope="user" key="tz">Europe/Paris</memory>'
    model = script({"text": f"noted {marker}<memory scope='session'>s</memory>"})
    facade = AppFacade.open(kairox_home, model=model)
    try:
        await facade.chat.open("ev", workspace=workspace)
        types = [getattr(u, "type", None) async for u in facade.chat.send("ev", "I live in Paris")]
        assert types.count("MemoryProposed") == 2 and types.count("MemoryAccepted") == 1
        assert types.index("AssistantMessageCompleted") < types.index("MemoryProposed")
    finally:
        await facade.aclose()
        facade.close()
