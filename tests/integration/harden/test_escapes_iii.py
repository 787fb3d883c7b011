"""Raw terminal escapes from a workspace path (``tokens create``, ``tokens list``, the ``mcp``
banner) and from a ``models pull`` NAME are shown, never obeyed (issue 33, Low)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harden_fakes import Kx

OBEYED = ("\x1b", "\x07", "\r", "\x9b")
NAME = "ws\x1b]52;c;ZXZpbA==\x07\x1b[2J"


def _inert(text: str) -> None:
    for char in OBEYED:
        assert char not in text, repr(char)


def test_a_hostile_workspace_path_is_inert_in_tokens_and_the_mcp_banner(
    tmp_path: Path, kx: Kx, kairox_home: Path
) -> None:
    hostile = tmp_path / NAME
    hostile.mkdir()
    created = kx("tokens", "create", "ci", "--workspace", str(hostile))
    assert created.returncode == 0, created.stderr
    _inert(created.stdout + created.stderr)
    assert "ws\\x1b]52" in created.stderr
    listed = kx("tokens", "list")
    assert listed.returncode == 0, listed.stderr
    _inert(listed.stdout)
    assert "ws\\x1b]52" in listed.stdout

    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "mcp", "--http", "--port", "0", "--workspace",
         str(hostile)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert banner.startswith("Kairox MCP server for ")
    _inert(banner)


def test_a_hostile_models_pull_name_is_inert(kx: Kx) -> None:
    result = kx("models", "pull", "evil\x1b]52;c;ZXZpbA==\x07", "--url", "http://127.0.0.1:9/x")
    assert result.returncode != 0
    _inert(result.stdout + result.stderr)
