"""``kairox sessions archive`` / ``unarchive`` / ``--all`` through the real CLI."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from helpers import kx

Script = Callable[..., str]
SESSION_MARKER = '<memory scope="session">We are on the release branch.</memory>'


def send(workspace: Path, model: str, message: str) -> subprocess.CompletedProcess[str]:
    return kx("send", "--workspace", str(workspace), "--model", model, "--session", "old", message)


def test_archive_discards_memories_hides_the_session_and_refuses_turns(
    workspace: Path, script: Script
) -> None:
    model = script({"text": f"Ok. {SESSION_MARKER}"}, {"text": "back again"})
    here = ("--workspace", str(workspace))  # a session name is resolved in its workspace
    assert send(workspace, model, "remember the branch").returncode == 0
    memories = json.loads(kx("memory", "list", *here, "--session", "old", "--json").stdout)
    [memory] = [m for m in memories if m["scope"] == "session"]
    assert memory["status"] == "accepted"

    archived = kx("sessions", "archive", *here, "old")
    assert archived.returncode == 0, archived.stderr
    assert "old" not in kx("sessions").stdout
    listed = json.loads(kx("sessions", "--all", "--json").stdout)
    assert [(s["name"], s["archived"]) for s in listed] == [("old", True)]
    assert "(archived)" in kx("sessions", "--all").stdout

    events = json.loads(kx("events", *here, "--session", "old", "--json").stdout)
    types = [e["type"] for e in events]
    assert "SessionArchived" in types and "MemoryDeleted" in types
    assert "UserMessageAdded" in types  # history stays in the log
    assert kx("memory", "show", memory["id"], "--json").stdout.count('"deleted"') >= 1

    refused = send(workspace, model, "hello?")
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert "archived" in line and "unarchive" in line
    # The command the error suggests works as printed, from any directory.
    suggested = shlex.split(line.split("`")[1])
    assert suggested[:4] == ["kairox", "sessions", "unarchive", "old"]
    assert suggested[4:] == ["--workspace", str(workspace)]
    assert kx(*suggested[1:]).returncode == 0
    assert "old" in kx("sessions").stdout
    again = send(workspace, model, "hello?")
    assert again.returncode == 0, again.stderr
    shown = json.loads(kx("memory", "show", memory["id"], "--json").stdout)
    assert shown["status"] == "deleted"  # discarded memories stay discarded
