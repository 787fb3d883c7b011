"""``send --wait`` shows only its own turn: the reply another process streamed while this one
waited for the session is not printed before it (issue 21, Low)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from harden_fakes import LoggingServer

from kairox.app import AppFacade, TurnDone
from kairox.core.events import ModelTokenDelta
from kairox.core.types import SessionState


async def _until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def _start_other(workspace: Path) -> subprocess.Popen[str]:
    """Another ``kairox send`` on the same session, its reply gated by the fake server."""
    return subprocess.Popen(
        [sys.executable, "-m", "kairox", "send", "--workspace", str(workspace), "--session", "w",
         "from the other process"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _finished(proc: subprocess.Popen[str]) -> int:
    return proc.wait(timeout=60)


async def test_a_waiting_send_streams_only_its_own_reply(
    tmp_path: Path,
    workspace: Path,
    kairox_home: Path,
    logging_openai: Callable[[], LoggingServer],
    script: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    theirs = logging_openai()
    theirs.gate = threading.Event()
    user = tmp_path / "user.toml"
    user.write_text(
        'default_profile = "remote"\n[profiles.remote]\nmodel = "openai:fake"\n'
        f'base_url = "{theirs.openai_url}"\napi_key_env = "MY_KEY"\n'
    )
    monkeypatch.setenv("KAIROX_CONFIG", str(user))
    monkeypatch.setenv("MY_KEY", "k")
    other = _start_other(workspace)
    try:
        await _until(lambda: bool(theirs.requests), "the other process's model call")
        facade = AppFacade.open(
            kairox_home,
            model=script({"text": "(the other process made call 0)"}, {"text": "mine"}),
            lease_wait_s=60,
        )
        try:
            info = await facade.chat.open("w", workspace=workspace)
            deltas: list[str] = []

            async def consume() -> None:
                async for update in facade.chat.send(info.id, "my prompt"):
                    if not isinstance(update, TurnDone) and isinstance(
                        update.payload, ModelTokenDelta
                    ):
                        deltas.append(update.payload.text)

            task = asyncio.create_task(consume())
            await _until(
                lambda: facade.chat.state(info.id) is SessionState.RUNNING_TURN, "our turn queued"
            )
            theirs.gate.set()  # the other process now streams "served" and ends its turn
            await asyncio.wait_for(task, timeout=60)
        finally:
            await facade.aclose()
            facade.close()
        assert _finished(other) == 0
    finally:
        theirs.gate.set()
        if other.poll() is None:
            other.kill()
            other.wait()
    assert "".join(deltas) == "mine"
