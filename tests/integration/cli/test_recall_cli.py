"""``kairox recall`` through the real binary: a fresh home, a session's history, ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import kx, use_scripted_model


def test_recall_on_a_fresh_home_says_nothing_is_indexed(workspace: Path) -> None:
    done = kx("recall", "anything at all", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"nothing is indexed for workspace {workspace.resolve()} yet")
    data = json.loads(kx("recall", "anything", "--json", cwd=workspace).stdout)
    assert data == {
        "query": "anything",
        "scope": {"session": None, "workspace": str(workspace.resolve())},
        "indexed": 0,
        "floor": 0.2,
        "below_floor": 0,
        "hits": [],
    }


def test_recall_finds_what_was_said_with_session_turn_seq_and_time(workspace: Path) -> None:
    use_scripted_model(workspace, "Noted: the cutover is Thursday.", "Sure.", "Fine.")
    for text in ("Schedule the database cutover for Thursday night.", "Hello", "Thanks"):
        sent = kx("send", "--workspace", str(workspace), "--session", "ops", text)
        assert sent.returncode == 0, sent.stderr
    found = kx("recall", "cutover", "--session", "ops", "--json", "--k", "2", cwd=workspace)
    data = json.loads(found.stdout)
    assert data["indexed"] == 6 and data["scope"]["session"] == "ops"
    first = data["hits"][0]
    assert {"seq", "session", "turn", "role", "speaker", "time", "score", "snippet"} == set(first)
    assert (first["session"], first["turn"], first["role"]) == ("ops", 1, "user")
    assert first["snippet"] == "Schedule the database cutover for Thursday night."
    assert len(data["hits"]) == 2 and data["hits"][1]["role"] == "assistant"
    events = json.loads(kx("events", "--session", "ops", "--json", cwd=workspace).stdout)
    said = next(e for e in events if e["type"] == "UserMessageAdded")
    assert first["seq"] == said["seq"] and first["time"] == said["ts"]

    text = kx("recall", "Thursday cutover", "--workspace", str(workspace)).stdout
    assert f"ops turn 1  seq:{first['seq']}  " in text and "  user\n" in text
    assert "Schedule the database cutover" in text
    # Bad input is one actionable line.
    both = kx("recall", "cutover", "--session", "ops", "--workspace", str(workspace))
    assert both.returncode == 0 and "ops turn 1" in both.stdout  # the name, in that workspace
    nope = kx("recall", "x", "--session", "missing")
    assert nope.returncode == 1 and len(nope.stderr.strip().splitlines()) == 1
    # Another workspace's session is not found, exactly like one nobody has (issue 33).
    elsewhere = kx("recall", "x", "--session", "ops", cwd=workspace.parent)
    assert elsewhere.returncode == 1
    assert elsewhere.stderr.strip() == nope.stderr.strip().replace("missing", "ops")
