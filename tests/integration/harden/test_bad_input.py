"""Bad input is one line with nothing written: undecodable argv and config files, hostile
session names and memory keys, and empty prompts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from harden_fakes import Kx

from kairox.app import AppFacade
from kairox.core.errors import InvalidInput
from kairox.core.types import MemoryScope


def db_events(home: Path) -> int:
    if not (home / "kairox.db").exists():
        return 0
    import sqlite3

    conn = sqlite3.connect(home / "kairox.db")
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        conn.close()


def test_invalid_utf8_in_argv_is_one_line_and_creates_no_session(
    workspace: Path, kairox_home: Path, script: Callable[..., str]
) -> None:
    model = script({"text": "never"})
    argv = [os.fsencode(sys.executable), b"-m", b"kairox", b"send", b"--workspace",
            os.fsencode(workspace), b"--model", os.fsencode(model), b"caf\xe9"]  # fmt: skip
    result = subprocess.run(argv, capture_output=True, timeout=120)
    assert result.returncode == 1
    [line] = result.stderr.decode().strip().splitlines()
    assert line == "error: argument 6 is not valid UTF-8 (byte 0xE9); pass text in UTF-8"
    assert db_events(kairox_home) == 0


def test_invalid_utf8_in_config_is_one_line(workspace: Path, kx: Kx, kairox_home: Path) -> None:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(b'default_profile = "caf\xe9"\n')
    for args in (("config", "show"), ("send", "hi")):
        result = kx(*args, "--workspace", str(workspace))
        assert result.returncode == 1
        [line] = result.stderr.strip().splitlines()
        assert str(path) in line and "not UTF-8" in line and "Fix:" in line
    assert db_events(kairox_home) == 0


@pytest.mark.parametrize(
    "name",
    ["two\nlines", "nul\x00byte", "rtl\u202eevil", "x" * 201, "tab\there", "   ", " s4", "s4 "],
    ids=["newline", "nul", "bidi", "long", "tab", "blank", "leading-space", "trailing-space"],
)
def test_hostile_session_names_are_refused_before_anything_is_written(
    workspace: Path, kx: Kx, kairox_home: Path, script: Callable[..., str], name: str
) -> None:
    if "\x00" in name:  # argv cannot carry NUL: go through the facade, as the web API does
        import asyncio

        async def go() -> None:
            facade = AppFacade.open(kairox_home)
            try:
                with pytest.raises(InvalidInput, match="a session name"):
                    await facade.chat.open(name, workspace=workspace)
                with pytest.raises(InvalidInput, match="a session name"):
                    await facade.sessions.start(name, workspace=workspace, profile="local")
            finally:
                facade.close()

        asyncio.run(go())
    else:
        model = script({"text": "never"})
        result = kx("send", "--workspace", str(workspace), "--session", name, "--model", model,
                    "hello")  # fmt: skip
        assert result.returncode == 1
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("error: a session name")
    assert db_events(kairox_home) == 0
    listed = kx("sessions", "--json")
    assert json.loads(listed.stdout) == []


async def test_hostile_memory_keys_are_refused_in_the_facade(
    workspace: Path, kairox_home: Path
) -> None:
    facade = AppFacade.open(kairox_home)
    try:
        for key in ("a\nb", "bidi\u2066x", "k" * 201):
            with pytest.raises(InvalidInput, match="a memory key"):
                await facade.memory.propose(
                    workspace=workspace, session=None, scope=MemoryScope.USER, key=key, body="b"
                )
        ok = await facade.memory.propose(
            workspace=workspace, session=None, scope=MemoryScope.USER, key="k" * 200, body="b"
        )
        assert ok.record.key == "k" * 200
    finally:
        facade.close()


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t "], ids=["empty", "spaces", "whitespace"])
def test_empty_prompts_are_refused(
    workspace: Path, kx: Kx, kairox_home: Path, script: Callable[..., str], prompt: str
) -> None:
    model = script({"text": "never"})
    result = kx("send", "--workspace", str(workspace), "--model", model, prompt)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: the prompt is empty; type a message to send"
    ]
    assert db_events(kairox_home) == 0


async def test_one_body_limit_for_every_surface(workspace: Path, kairox_home: Path, kx: Kx) -> None:
    """``MAX_BODY_CHARS`` holds in the facade: the CLI's edit, the MCP tools' proposals and the
    web API all reach it there."""
    from kairox.core.records import MAX_BODY_CHARS

    facade = AppFacade.open(kairox_home)
    try:
        with pytest.raises(InvalidInput, match=f"at most {MAX_BODY_CHARS} characters"):
            await facade.memory.propose(workspace=workspace, session=None,
                                        scope=MemoryScope.USER, key="k",
                                        body="x" * (MAX_BODY_CHARS + 1))  # fmt: skip
        routed = await facade.memory.propose(
            workspace=workspace, session=None, scope=MemoryScope.USER, key="k", body="short"
        )
    finally:
        facade.close()
    over = kx("memory", "edit", routed.record.id, "--body", "x" * (MAX_BODY_CHARS + 1))
    assert over.returncode == 1
    assert over.stderr.strip().splitlines() == [
        f"error: a memory body has at most {MAX_BODY_CHARS} characters; "
        f"this one has {MAX_BODY_CHARS + 1}"
    ]
    shown = json.loads(kx("memory", "show", routed.record.id, "--json").stdout)
    assert shown["body"] == "short" and shown["version"] == 0  # a proposal, not a version yet
