"""The embedded model's first impression, through the real CLI: a sign of life until the first
token, a short system prompt for the small model, and no proposal copied from the prompt."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import kx
from kairox.runtime.prompts import MEMORY_PROTOCOL, SHORT_PROMPT

Script = Callable[..., str]


def last_trace(workspace: Path, session: str) -> dict[str, object]:
    shown = kx("events", "--workspace", str(workspace), "--session", session, "--json")
    events = json.loads(shown.stdout)
    return [e for e in events if e["type"] == "ContextAssembled"][-1]["payload"]  # type: ignore[no-any-return]


@pytest.mark.slow
def test_local_model_says_it_is_loading_and_gets_the_short_prompt(workspace: Path) -> None:
    result = kx("send", "--workspace", str(workspace), "--model", "local", "--session", "lm", "Hi")
    assert result.returncode == 0, result.stderr
    # Once per session: the demo model says what it cannot do and how to use a better one.
    notices = [
        line for line in result.stderr.splitlines() if "SmolLM2-135M is a demo model" in line
    ]
    assert len(notices) == 1 and "kairox models pull" in notices[0], result.stderr
    # stderr is a pipe here: no spinner is written as text
    assert "loading model" not in result.stderr, (result.stdout, result.stderr)
    events = json.loads(
        kx("events", "--workspace", str(workspace), "--session", "lm", "--json").stdout
    )
    [call] = [e["payload"] for e in events if e["type"] == "ModelCallStarted"]
    assert call["loading"] is True and call["model"] == "local"
    trace = last_trace(workspace, "lm")
    assert trace["system_prompt"] == SHORT_PROMPT
    assert "stable.key" not in str(trace["system_prompt"])
    assert trace["model"] == "local (SmolLM2-135M-Instruct.Q4_1.gguf)"  # which file it ran
    again = kx("send", "--workspace", str(workspace), "--model", "local", "--session", "lm", "Hi")
    assert again.returncode == 0 and "demo model" not in again.stderr
    notices = kx("events", "--workspace", str(workspace), "--session", "lm", "--json").stdout
    assert [e["type"] for e in json.loads(notices)].count("ModelNotice") == 1


def test_a_remote_style_model_waits_without_loading_and_gets_the_full_prompt(
    workspace: Path, script: Script
) -> None:
    model = script({"text": "hello"})
    result = kx("send", "--workspace", str(workspace), "--model", model, "--session", "rm", "Hi")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # stderr is a pipe: no spinner written as text (issue 26)
    assert result.stdout == "hello\n"
    assert MEMORY_PROTOCOL in str(last_trace(workspace, "rm")["system_prompt"])
    quiet = kx("send", "--workspace", str(workspace), "--model", model, "--json", "Hi again")
    assert "waiting" not in quiet.stderr


@pytest.mark.parametrize(
    ("marker", "reason"),
    [
        ('<memory scope="user" key="stable.key">I like tea</memory>', "key 'stable.key'"),
        ('<memory scope="session">fact</memory>', "body is copied"),
        ('<memory scope="session">the fact</memory>', "body is copied"),
        (
            '<memory scope="workspace" key="w.k">Each marker holds exactly one fact, stated as a'
            " fact</memory>",
            "copied from the system prompt",
        ),
    ],
)
def test_a_proposal_copied_from_the_prompt_examples_is_never_accepted(
    workspace: Path, script: Script, marker: str, reason: str
) -> None:
    tea = '<memory scope="session">User likes tea</memory>'
    model = script({"text": f"Sure. {marker} {tea}"})
    result = kx("send", "--workspace", str(workspace), "--model", model, "--json", "Hi")
    assert result.returncode == 0, result.stderr
    copied, real = json.loads(result.stdout)["proposals"]
    assert copied["status"] == "rejected"
    assert real == {**real, "status": "accepted", "body": "User likes tea"}
    shown = json.loads(kx("memory", "show", copied["id"], "--json").stdout)
    assert reason in shown["decision_reason"] and shown["decided_by"] == "policy"
