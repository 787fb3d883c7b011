"""The real ``kairox chat`` binary in a real terminal (tmux): type a message, read the screen.

This proves the TUI works outside the pilot harness: a real pty, real key sequences, real
rendering. The scripted model keeps it offline and deterministic.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux") or "/usr/bin/tmux"
REPLY = "Hello from the scripted model."
MARKER = '<memory scope="user" key="editor.font">JetBrains Mono</memory>'
SECOND = "Tea it is."


class Tmux:
    """One tmux session on a private server socket, so no user's tmux is touched."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX, "-L", self.name, *args], check=True, capture_output=True, text=True, timeout=30
        )
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.name, *(["-l"] if literal else []), *keys)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{text}")
            time.sleep(0.1)

    def kill(self) -> None:
        subprocess.run(
            [TMUX, "-L", self.name, "kill-session", "-t", self.name], capture_output=True
        )
        subprocess.run([TMUX, "-L", self.name, "kill-server"], capture_output=True)


@pytest.fixture
def tmux_chat(tmp_path: Path, workspace: Path, kairox_home: Path) -> Iterator[Tmux]:
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"text": f"{REPLY} {MARKER}"}) + "\n" + json.dumps({"text": SECOND}) + "\n",
        encoding="utf-8",
    )
    command = " ".join(
        shlex.quote(part)
        for part in [
            sys.executable,
            "-m",
            "kairox",
            "--home",
            str(kairox_home),
            "chat",
            "--workspace",
            str(workspace),
            "--model",
            f"scripted:{script}",
        ]
    )
    session = Tmux(f"kairox-test-{uuid.uuid4().hex[:8]}")
    # pytest may export COLUMNS/LINES; the app must size itself from the real pane instead.
    env = (
        "env -u COLUMNS -u LINES TERM=xterm-256color "
        f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path / 'xdg'))}"
    )
    try:
        session.run(
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "40",
            "-s",
            session.name,
            # Textual draws on stderr, so nothing is redirected; the sleep keeps the pane open.
            f"{env} {command}; sleep 30",
        )
        yield session
    finally:
        session.kill()


def test_type_a_message_and_read_the_reply(tmux_chat: Tmux) -> None:
    tmux = tmux_chat
    screen = tmux.wait_for(
        lambda s: "session main" in s and "idle" in s and "Tab Cards" in s, "the chat screen"
    )
    assert "model scripted:" in screen  # the header names the --model in use
    assert "Tab Cards" in screen  # the footer says how to reach a card
    assert "context: no turn yet" in screen
    tmux.keys("remember my font", literal=True)
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: REPLY in s, "the reply")
    assert "<memory" not in screen
    screen = tmux.wait_for(lambda s: "editor.font" in s and "a approve" in s, "the card")
    # the meter shows the first turn, on one line of a 100-column terminal
    screen = tmux.wait_for(lambda s: "no turn yet" not in s, "the meter after the first turn")
    [meter] = [line for line in screen.splitlines() if line.strip().startswith("context ")]
    assert "sys " in meter and "prompt " in meter and len(meter.rstrip()) <= 100
    tmux.keys("Tab")
    tmux.wait_for(lambda s: "a Approve" in s, "the focused card's keys in the footer")
    tmux.keys("a")
    screen = tmux.wait_for(lambda s: "accepted by user" in s, "the approval")
    screen = tmux.wait_for(lambda s: "a Approve" not in s, "a decided card's keys gone")
    assert "r Reject" not in screen and "e Edit" not in screen and "· e edit" not in screen
    tmux.keys("C-q")
    tmux.wait_for(lambda s: "session main" not in s, "the app to quit", timeout=30)


@pytest.mark.parametrize("attempt", range(3))
def test_keys_typed_right_after_a_decision_reach_the_input_in_order(
    tmux_chat: Tmux, attempt: int
) -> None:
    """``a`` on a card, then at once a message and Enter (typed fast or pasted): the card takes
    no key after its decision is sent, and the rest reaches the input in order (issue 33)."""
    del attempt
    tmux = tmux_chat
    tmux.wait_for(lambda s: "session main" in s and "idle" in s, "the chat screen")
    tmux.keys("remember my font", literal=True)
    tmux.keys("Enter")
    tmux.wait_for(lambda s: "editor.font" in s and "a approve" in s, "the card")
    tmux.wait_for(lambda s: "idle" in s, "the turn to end")
    tmux.keys("Tab")
    tmux.wait_for(lambda s: "a Approve" in s, "the focused card")
    tmux.run("send-keys", "-t", tmux.name, "-l", "aI also like tea")
    tmux.keys("Enter")
    screen = tmux.wait_for(lambda s: SECOND in s, "the second reply")
    assert "I also like tea" in screen, screen
    assert "Edit user" not in screen and "edit is approved" not in screen
    screen = tmux.wait_for(lambda s: "accepted by user" in s, "the approval")
    tmux.keys("C-q")
