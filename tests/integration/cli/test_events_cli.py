"""``kairox events`` through the real binary: streamed deltas are in the log, and hidden unless
``--deltas``."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import kx, scripted


def test_kairox_events_hides_deltas_unless_asked(tmp_path: Path, workspace: Path) -> None:
    model = scripted(tmp_path, "Hello there, friend.")
    sent = kx("send", "--session", "s", "--model", model, "hi", cwd=workspace)
    assert sent.returncode == 0, sent.stderr
    plain = json.loads(kx("events", "--json", cwd=workspace).stdout)
    assert plain and all(e["type"] != "ModelTokenDelta" for e in plain)
    assert any(e["type"] == "AssistantMessageCompleted" for e in plain)
    full = json.loads(kx("events", "--json", "--deltas", cwd=workspace).stdout)
    deltas = [e["payload"]["text"] for e in full if e["type"] == "ModelTokenDelta"]
    assert "".join(deltas) == "Hello there, friend."
    assert len(full) == len(plain) + len(deltas)
    assert "ModelTokenDelta" not in kx("events", cwd=workspace).stdout
