"""The store under stress: a full disk and a damaged database are one line naming the file and
what to do; a NUL in a model's reply is replaced before anything is written, the same on SQLite
and Postgres (issue 21, Low)."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from harden_fakes import Kx


def _small_files() -> None:
    """A disk that is nearly full: no file of this process may grow past 64 KiB."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_full_disk_is_one_line_naming_the_database(
    workspace: Path, kairox_home: Path, kx: Kx, script: Callable[..., str]
) -> None:
    model = script({"text": "ok"}, {"text": "never"})
    assert kx("send", "--workspace", str(workspace), "--model", model, "hi").returncode == 0
    result = subprocess.run(
        [sys.executable, "-m", "kairox", "send", "--workspace", str(workspace), "--model", model,
         "x " * 50_000],
        capture_output=True, text=True, timeout=120, preexec_fn=_small_files,
    )  # fmt: skip
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()[-1:]
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert line.startswith("error: cannot write") and str(kairox_home / "kairox.db") in line
    assert "free some space" in line


def _scramble_table(db: Path, table: str) -> None:
    """Damage one table's root page, as a bad sector or a torn copy would."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
    conn.close()
    with db.open("r+b") as fh:
        fh.seek((root[0] - 1) * page_size)
        fh.write(b"\x0d" + os.urandom(page_size - 1))  # a leaf page full of nonsense


@pytest.mark.parametrize("table", ["sessions", "events_by_type", "sqlite_sequence"])
def test_a_damaged_database_is_one_line_naming_the_file(
    workspace: Path, kairox_home: Path, kx: Kx, script: Callable[..., str], table: str
) -> None:
    model = script({"text": "ok"}, {"text": "again"})
    assert kx("send", "--workspace", str(workspace), "--model", model, "hi").returncode == 0
    db = kairox_home / "kairox.db"
    _scramble_table(db, table)
    result = kx("send", "--workspace", str(workspace), "--model", model, "again")
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error:") and str(db) in line
    assert "damaged" in line and "move it aside" in line


NUL_REPLY = 'a\x00b <memory scope="session">x\x00y</memory>'


def test_a_nul_in_a_reply_is_replaced_before_anything_is_written(
    workspace: Path,
    kx: Kx,
    script: Callable[..., str],
    on_store: str | None,
) -> None:
    model = script({"text": NUL_REPLY})
    result = kx("send", "--workspace", str(workspace), "--json", "--model", model, "hi")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["reply"].startswith("a\ufffdb") and out["error"] is None
    [proposal] = out["proposals"]
    assert proposal["body"] == "x\ufffdy" and proposal["status"] == "accepted"
    events = json.loads(kx("events", "--workspace", str(workspace), "--json").stdout)
    types = [e["type"] for e in events]
    assert "AssistantMessageCompleted" in types and "TurnFailed" not in types
    assert "\\u0000" not in json.dumps(events)
