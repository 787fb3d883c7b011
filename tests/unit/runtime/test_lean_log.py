"""A lean log: `kairox events` hides the streamed `ModelTokenDelta` pieces unless `--deltas`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_kairox_events_hides_deltas_unless_asked(tmp_path: Path, workspace: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Hello there, friend."}) + "\n")

    def kx(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kairox", *args],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=workspace,
        )

    sent = kx("send", "--session", "s", "--model", f"scripted:{script}", "hi")
    assert sent.returncode == 0, sent.stderr
    plain = json.loads(kx("events", "--json").stdout)
    assert plain and all(e["type"] != "ModelTokenDelta" for e in plain)
    assert any(e["type"] == "AssistantMessageCompleted" for e in plain)
    full = json.loads(kx("events", "--json", "--deltas").stdout)
    deltas = [e["payload"]["text"] for e in full if e["type"] == "ModelTokenDelta"]
    assert "".join(deltas) == "Hello there, friend."
    assert len(full) == len(plain) + len(deltas)
    assert "ModelTokenDelta" not in kx("events").stdout
