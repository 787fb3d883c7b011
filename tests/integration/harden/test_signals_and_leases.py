"""SIGTERM ends a turn like Ctrl-C (``TurnFailed``, lease released); a dead holder's lease is
taken over at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from harden_fakes import Kx

from kairox.services import Services
from kairox.store.sessions import SessionRegistry


def wait_for(predicate: Callable[[], bool], *, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the state never came")
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["term", "int"])
def test_a_signal_ends_the_turn_and_releases_the_lease(
    workspace: Path, kairox_home: Path, script: Callable[..., str], kx: Kx, signum: int
) -> None:
    model = script({"text": "partial ", "hang": True}, {"text": "next turn"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "send", "--workspace", str(workspace),
         "--session", "sig", "--model", model, "hello"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    try:
        services = Services.open(kairox_home)
        try:
            wait_for(lambda: bool(services.events.read(types=["ModelTokenDelta"])))
            proc.send_signal(signum)
            proc.communicate(timeout=60)
            [failed] = services.events.read(types=["TurnFailed"])
            assert failed.payload.reason  # type: ignore[union-attr]
            leases = services.db.query("SELECT * FROM session_leases")
            assert leases == []
        finally:
            services.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    again = kx("send", "--workspace", str(workspace), "--session", "sig", "--model", model, "hi")
    assert again.returncode == 0, again.stderr


def test_a_lease_whose_holder_died_is_taken_over_at_once(
    workspace: Path, kairox_home: Path, script: Callable[..., str], kx: Kx
) -> None:
    model = script({"text": "first"}, {"text": "second"})
    assert kx("send", "--workspace", str(workspace), "--session", "d", "--model", model,
              "hi").returncode == 0  # fmt: skip
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    holder = SessionRegistry.default_holder().replace(f"pid:{os.getpid()}:", f"pid:{dead.pid}:")
    services = Services.open(kairox_home)
    try:
        session = services.sessions.get("d")
        services.sessions.acquire_lease(session.id, holder, ttl_s=3600)
    finally:
        services.close()
    result = kx("send", "--workspace", str(workspace), "--session", "d", "--model", model, "again")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "second"


def test_a_live_holder_still_blocks(
    workspace: Path, kairox_home: Path, kx: Kx, script: Callable[..., str]
) -> None:
    model = script({"text": "first"}, {"text": "second"})
    assert kx("send", "--workspace", str(workspace), "--session", "l", "--model", model,
              "hi").returncode == 0  # fmt: skip
    services = Services.open(kairox_home)
    try:
        session = services.sessions.get("l")
        services.sessions.acquire_lease(session.id, SessionRegistry.default_holder(), ttl_s=3600)
    finally:
        services.close()
    result = kx("send", "--workspace", str(workspace), "--session", "l", "--model", model, "x")
    assert result.returncode == 1 and "session busy" in result.stderr
    events = json.loads(
        kx("events", "--workspace", str(workspace), "--session", "l", "--json").stdout
    )
    assert [e["type"] for e in events].count("UserMessageAdded") == 1


def _default_sigint() -> None:
    """A foreground command's SIGINT, whatever the test runner inherited (a runner started as a
    background job has SIGINT ignored, and its children would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ignore_sigint() -> None:
    """What a script's ``cmd &`` does: the background job starts with SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_sigterm_stops_a_turn_when_sigint_is_ignored(
    workspace: Path, kairox_home: Path, script: Callable[..., str]
) -> None:
    model = script({"text": "partial ", "hang": True})
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "send", "--workspace", str(workspace),
         "--session", "bg", "--model", model, "hello"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ignore_sigint,
    )  # fmt: skip
    try:
        services = Services.open(kairox_home)
        try:
            wait_for(lambda: bool(services.events.read(types=["ModelTokenDelta"])))
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)
            [failed] = services.events.read(types=["TurnFailed"])
            assert failed.payload.reason  # type: ignore[union-attr]
            assert services.db.query("SELECT * FROM session_leases") == []
        finally:
            services.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0


def test_sigterm_stops_kairox_mcp_when_sigint_is_ignored(workspace: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "mcp", "--workspace", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_ignore_sigint,
    )  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        proc.stdin.write((json.dumps(hello) + "\n").encode())
        proc.stdin.flush()
        assert b'"id":1' in proc.stdout.readline().replace(b" ", b"")  # serving, stdin open
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0


def test_a_turn_killed_with_sigkill_is_closed_as_interrupted_and_never_replayed(
    workspace: Path, kairox_home: Path, script: Callable[..., str], kx: Kx
) -> None:
    model = script({"text": "partial ", "hang": True}, {"text": "fresh start"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "send", "--workspace", str(workspace),
         "--session", "k", "--model", model, "the killed prompt"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    services = Services.open(kairox_home)
    try:
        wait_for(lambda: bool(services.events.read(types=["ModelTokenDelta"])))
        proc.kill()
        proc.wait()
        assert services.events.read(types=["TurnFailed"]) == []  # no end event yet
    finally:
        services.close()
    again = kx("send", "--workspace", str(workspace), "--session", "k", "--model", model, "next")
    assert again.returncode == 0, again.stderr
    events = json.loads(kx("events", "--workspace", str(workspace), "--session", "k",
                           "--json").stdout)  # fmt: skip
    [failed] = [e for e in events if e["type"] == "TurnFailed"]
    assert failed["payload"]["turn"] == 1 and failed["payload"]["reason"] == "interrupted"
    assembled = [e for e in events if e["type"] == "ContextAssembled"]
    assert "the killed prompt" not in json.dumps(assembled[-1]["payload"]["items"])
    replay = kx("context", "--workspace", str(workspace), "--session", "k", "--show")
    assert "the killed prompt" not in replay.stdout and "next" in replay.stdout
