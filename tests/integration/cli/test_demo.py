from __future__ import annotations

import subprocess
import sys


def test_demo_tours_proposal_approval_retrieval_and_trace() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kairox", "demo"], capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "proposed [user] style.answers: Prefers short answers. -> pending" in out
    assert "style.answers: accepted" in out
    assert "<memory" not in out
    assert "+ memory: user:style.answers" in out  # a keyed memory by scope:key (issue 26)
    assert "+ memory: mem:" in out  # a session memory without a key, by its reference
    assert "docs/release.md" in out and "+ workspace: chunk:" in out
    assert "budget" in out
