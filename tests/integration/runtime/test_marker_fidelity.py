"""Markers never eat text, and every marker that is not a proposal is recorded with its reason.

Driven through the real CLI with the scripted model and a real home database.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import kx

Script = Callable[..., str]


def send(workspace: Path, model: str, message: str) -> dict[str, Any]:
    result = kx("send", "--workspace", str(workspace), "--model", model, "--json", message)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def events_of(workspace: Path, session: str, kind: str) -> list[dict[str, Any]]:
    result = kx("events", "--workspace", str(workspace), "--session", session, "--json")
    assert result.returncode == 0, result.stderr
    return [e["payload"] for e in json.loads(result.stdout) if e["type"] == kind]


def test_a_near_miss_close_tag_neither_hides_the_answer_nor_loses_the_proposal(
    workspace: Path, script: Script
) -> None:
    reply = 'Noted <memory scope="workspace" key="k">Use ruff.</memory > The answer is 42.'
    out = send(workspace, script({"text": reply, "chunk": 3}), "lint?")
    assert out["reply"] == "Noted  The answer is 42."
    [proposal] = out["proposals"]
    assert (proposal["key"], proposal["body"]) == ("k", "Use ruff.")


def test_an_unclosed_marker_keeps_the_rest_of_the_reply_and_is_recorded(
    workspace: Path, script: Script
) -> None:
    reply = 'Noted <memory scope="workspace" key="k">Use ruff. The answer is 42.'
    out = send(workspace, script({"text": reply, "chunk": 5}), "lint?")
    assert out["reply"] == "Noted Use ruff. The answer is 42."
    assert out["proposals"] == []
    [rejected] = events_of(workspace, out["session"], "MemoryMarkerRejected")
    assert rejected["raw"] == '<memory scope="workspace" key="k">'
    assert "unclosed" in rejected["reason"]


def test_an_open_tag_spread_over_lines_is_a_proposal(workspace: Path, script: Script) -> None:
    reply = 'Sure.<memory\n  scope="workspace"\n  key="style">Conventional Commits.</memory>'
    out = send(workspace, script({"text": reply, "chunk": 2}), "style?")
    assert out["reply"] == "Sure."
    [proposal] = out["proposals"]
    assert (proposal["scope"], proposal["key"]) == ("workspace", "style")


def test_every_rejected_marker_is_an_event_with_reason_and_raw(
    workspace: Path, script: Script
) -> None:
    bad = [
        '<memory scope="user">no key</memory>',
        '<memory scope="User" key="k">mis-cased scope</memory>',
        '<memory scope="global" key="k">unknown scope</memory>',
        '<memory scope="session">  </memory>',
    ]
    reply = "a" + "b".join(bad) + 'c<memory scope="session">never closed'
    out = send(workspace, script({"text": reply}), "go")
    assert out["reply"] == "abbbcnever closed"
    rejected = events_of(workspace, out["session"], "MemoryMarkerRejected")
    assert [r["raw"] for r in rejected] == [*bad, '<memory scope="session">']
    reasons = [r["reason"] for r in rejected]
    assert "user memory needs a key" in reasons[0]
    assert "'User' is not one of" in reasons[1]
    assert "'global' is not one of" in reasons[2]
    assert "empty" in reasons[3]
    assert "unclosed" in reasons[4]
    plain = kx("events", "--workspace", str(workspace), "--session", out["session"])
    types = [line.split()[1] for line in plain.stdout.splitlines()]
    assert types.count("MemoryMarkerRejected") == 5


def test_markers_parsed_before_a_failure_are_still_routed_and_recorded(
    workspace: Path, script: Script
) -> None:
    reply = (
        'One <memory scope="session">Prefers tabs.</memory> two '
        '<memory scope="user" key="f">Mono</memory> three <memory scope="x">bad</memory> '
        '<memory scope="session">cut off'
    )
    result = kx(
        "send",
        "--workspace",
        str(workspace),
        "--model",
        script({"text": reply, "error": "connection reset"}),
        "--json",
        "hi",
    )
    assert result.returncode != 0
    assert "connection reset" in result.stdout + result.stderr
    events = json.loads(kx("events", "--json").stdout)
    name = next(e["payload"]["name"] for e in events if e["type"] == "SessionStarted")
    proposed = events_of(workspace, name, "MemoryProposed")
    assert [(p["scope"], p["body"]) for p in proposed] == [
        ("session", "Prefers tabs."),
        ("user", "Mono"),
    ]
    accepted = events_of(workspace, name, "MemoryAccepted")
    assert [a["body"] for a in accepted] == ["Prefers tabs."]
    rejected = events_of(workspace, name, "MemoryMarkerRejected")
    assert [r["raw"] for r in rejected] == [
        '<memory scope="x">bad</memory>',
        '<memory scope="session">',
    ]
    assert events_of(workspace, name, "TurnFailed")
