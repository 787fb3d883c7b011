"""``[memory]`` settings take effect, and an unknown key anywhere names itself and its file."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Script = Callable[..., str]
SESSION_MARKER = '<memory scope="session">We are on the release branch.</memory>'


def kx(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kairox", *args], capture_output=True, text=True, timeout=120
    )


def write_config(workspace: Path, text: str) -> Path:
    path = workspace / ".kairox" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def send(workspace: Path, model: str, message: str) -> dict[str, object]:
    result = kx("send", "--workspace", str(workspace), "--model", model, "--json", message)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_config_show_prints_exactly_the_memory_keys_tested_here(workspace: Path) -> None:
    rows = json.loads(kx("config", "show", "--workspace", str(workspace), "--json").stdout)
    keys = {r["key"] for r in rows if r["key"].startswith("memory.")}
    assert keys == {
        "memory.auto_accept_session",
        "memory.max_proposals_per_turn",
        "memory.session_after_untrusted",
    }


def test_session_after_untrusted_has_two_values_and_refuses_others(workspace: Path) -> None:
    rows = json.loads(kx("config", "show", "--workspace", str(workspace), "--json").stdout)
    [row] = [r for r in rows if r["key"] == "memory.session_after_untrusted"]
    assert row["value"] == "accept"  # the default: a tainted session memory is accepted, marked
    path = write_config(workspace, '[memory]\nsession_after_untrusted = "sometimes"\n')
    shown = kx("config", "show", "--workspace", str(workspace))
    assert shown.returncode == 1
    [line] = shown.stderr.splitlines()
    assert str(path) in line and "memory.session_after_untrusted" in line
    assert "'accept' or 'ask'" in line


def test_auto_accept_session_false_leaves_session_memories_pending(
    workspace: Path, script: Script
) -> None:
    write_config(workspace, "[memory]\nauto_accept_session = false\n")
    out = send(workspace, script({"text": f"Ok. {SESSION_MARKER}"}), "remember the branch")
    [proposal] = out["proposals"]  # type: ignore[misc]
    assert proposal["scope"] == "session" and proposal["status"] == "pending"


def test_auto_accept_session_true_accepts_them(workspace: Path, script: Script) -> None:
    write_config(workspace, "[memory]\nauto_accept_session = true\n")
    out = send(workspace, script({"text": f"Ok. {SESSION_MARKER}"}), "remember the branch")
    [proposal] = out["proposals"]  # type: ignore[misc]
    assert proposal["status"] == "accepted"


def test_max_proposals_per_turn_caps_the_turn(workspace: Path, script: Script) -> None:
    write_config(workspace, "[memory]\nmax_proposals_per_turn = 1\n")
    markers = "".join(
        f'<memory scope="workspace" key="k{n}">fact number {n}</memory>' for n in range(3)
    )
    out = send(workspace, script({"text": f"Noted. {markers}"}), "three facts")
    statuses = [p["status"] for p in out["proposals"]]  # type: ignore[union-attr, index]
    assert statuses == ["pending", "rejected", "rejected"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("colour = 1\n", "colour"),
        ("[memory]\nauto_accept = true\n", "memory.auto_accept"),
        ("[retrieval]\nembeder = 'hashing'\n", "retrieval.embeder"),
        ("[compaction]\nthreshhold = 0.5\n", "compaction.threshhold"),
        ("[profiles.x]\nmodel = 'local'\ncontext_windw = 10\n", "profiles.x.context_windw"),
        (
            "[knowledge_bases.docs]\nkind = 'sqlite_fts'\npath = 'kb.db'\nbogus = 1\n",
            "bogus",
        ),
    ],
)
def test_an_unknown_key_in_any_section_names_the_key_and_the_file(
    workspace: Path, text: str, key: str
) -> None:
    path = write_config(workspace, text)
    result = kx("config", "show", "--workspace", str(workspace))
    assert result.returncode != 0
    [line] = result.stderr.strip().splitlines()
    assert key in line and str(path) in line
