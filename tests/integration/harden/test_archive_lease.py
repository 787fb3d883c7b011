"""Archiving a session goes through its queue and lease like compaction: while another process runs
a turn, ``kairox sessions archive`` and the web's Archive are refused with "session busy";
``--wait`` archives after the turn, and no session memory is left accepted in an archived session.

The turn's model is a loopback OpenAI-compatible server that holds its reply until the test lets
it go, so the turn is observably in flight.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from harden_fakes import Kx, LoggingServer

from kairox.app import AppFacade
from kairox.web import SecurityConfig, WebContext, create_app

MARKER = '<memory scope="session">the build runs on port 8080</memory>'


def wait_for(predicate: Callable[[], bool], *, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the state never came")
        time.sleep(0.05)


async def _web_archive(home: Path, workspace: Path, name: str) -> httpx.Response:
    """The web UI's Archive, from a server for ``workspace`` (its own process's facade)."""
    facade = AppFacade.open(home)
    security = SecurityConfig(port=8999)
    ctx = WebContext(facade=facade, workspace=workspace, security=security)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(ctx)),
            base_url="http://127.0.0.1:8999",
            headers={"Authorization": f"Bearer {security.token}"},
        ) as client:
            return await client.post(f"/api/sessions/{name}/archive")
    finally:
        await facade.aclose()
        facade.close()


def test_archive_waits_for_the_running_turn_or_is_refused(
    tmp_path: Path,
    workspace: Path,
    kairox_home: Path,
    logging_openai: Callable[[], LoggingServer],
    kx: Kx,
    on_store: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = logging_openai()
    server.reply = f"Noted. {MARKER}"
    server.hold = threading.Event()
    user_config = tmp_path / "user.toml"
    user_config.write_text(
        'default_profile = "remote"\n[profiles.remote]\nmodel = "openai:fake"\n'
        f'base_url = "{server.openai_url}"\napi_key_env = "MY_KEY"\n'
    )
    monkeypatch.setenv("KAIROX_CONFIG", str(user_config))
    monkeypatch.setenv("MY_KEY", "k")
    ws = ("--workspace", str(workspace))
    turn = subprocess.Popen(
        [sys.executable, "-m", "kairox", "send", *ws, "--session", "s4", "remember the port"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    waiter: subprocess.Popen[str] | None = None
    try:
        wait_for(server.arrived.is_set)  # the turn holds the session's lease now

        refused = kx("sessions", "archive", "s4", *ws)
        assert refused.returncode == 1
        assert refused.stderr.startswith("error: session busy: 's4'"), refused.stderr

        archive = asyncio.run(_web_archive(kairox_home, workspace, "s4"))
        assert archive.status_code == 409, archive.text
        assert archive.json()["error"].startswith("session busy: 's4'")

        waiter = subprocess.Popen(
            [sys.executable, "-m", "kairox", "sessions", "archive", "s4", *ws, "--wait", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        server.hold.set()  # the turn ends; the waiting archive runs after it
        _, sent_err = turn.communicate(timeout=120)
        assert turn.returncode == 0, sent_err
        assert "memory accepted: [session]" in sent_err
        archived_out, archived_err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, archived_err
        assert archived_out.strip() == "session s4 archived"
    finally:
        server.hold.set()
        for proc in (turn, waiter):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()

    events = json.loads(kx("events", *ws, "--json").stdout)
    order = [e["type"] for e in events if e["session_id"] is not None]
    accepted = order.index("MemoryAccepted")
    assert accepted < order.index("SessionArchived")
    memories = kx("memory", "list", *ws, "--all-sessions", "--status", "all", "--json")
    [memory] = json.loads(memories.stdout)
    assert memory["scope"] == "session" and memory["status"] == "deleted"
