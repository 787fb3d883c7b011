"""The first hour at the CLI: duplicate proposals, the body a change replaces, id prefixes, the
memory list's defaults, the approval hint, errors on stderr, and the actionable kb error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import kx, scripted
from kairox.core.ids import workspace_id_for
from kairox.core.types import MemoryScope
from kairox.services import Services


def propose(home: Path, workspace: Path, key: str, body: str) -> str:
    services = Services.open(home)
    try:
        return services.memories.propose(
            MemoryScope.WORKSPACE, key, body, workspace_id=workspace_id_for(workspace),
            session_id=None,
        ).id  # fmt: skip
    finally:
        services.close()


def send(
    workspace: Path, model: str, message: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return kx("send", "--workspace", str(workspace), "--model", model, *extra, message)


def test_identical_marker_proposals_are_no_ops_and_a_change_shows_what_it_replaces(
    workspace: Path, tmp_path: Path
) -> None:
    marker = '<memory scope="workspace" key="build.tool">uv</memory>'
    first = send(
        workspace,
        scripted(tmp_path, f"ok {marker}"),
        "we build with uv",
        "--json",
        "--session",
        "t0",
    )
    [proposal] = json.loads(first.stdout)["proposals"]
    again = send(
        workspace, scripted(tmp_path, f"noted {marker}"), "uv, as I said", "--session", "t1"
    )
    assert "already remembered (pending)" in again.stderr and proposal["id"] in again.stderr
    listed = json.loads(kx("memory", "list", "--workspace", str(workspace), "--json").stdout)
    assert [m["id"] for m in listed] == [proposal["id"]]

    assert kx("memory", "approve", proposal["id"]).returncode == 0
    third = send(
        workspace,
        scripted(tmp_path, f"sure {marker}"),
        "uv again",
        "--json",
        "--session",
        "t2",
    )
    assert json.loads(third.stdout)["proposals"] == []
    assert json.loads(third.stdout)["duplicates"] == [{"id": proposal["id"], "key": "build.tool"}]

    change = '<memory scope="workspace" key="build.tool">poetry</memory>'
    fourth = send(
        workspace,
        scripted(tmp_path, f"ok {change}"),
        "we moved to poetry",
        "--json",
        "--session",
        "t3",
    )
    [pending] = json.loads(fourth.stdout)["proposals"]
    shown = kx("memory", "show", pending["id"])
    assert "replaces: uv" in shown.stdout
    listed = kx("memory", "list", "--workspace", str(workspace))
    assert "replaces: uv" in listed.stdout
    assert json.loads(kx("memory", "show", pending["id"], "--json").stdout)["replaces_body"] == "uv"
    assert kx("memory", "approve", pending["id"]).returncode == 0
    current = json.loads(kx("memory", "show", proposal["id"], "--json").stdout)
    assert current["body"] == "poetry" and current["version"] == 2  # a new version of the same
    assert current["replaces_body"] is None


def test_send_says_how_to_approve_and_a_failing_json_send_still_errs_on_stderr(
    workspace: Path, tmp_path: Path
) -> None:
    marker = '<memory scope="user" key="editor.font">Mono</memory>'
    sent = send(workspace, scripted(tmp_path, f"ok {marker}"), "I like Mono")
    assert sent.returncode == 0
    assert "approve with `kairox memory approve mem_" in sent.stderr

    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        'default_profile = "tiny"\n[profiles.tiny]\nmodel = "scripted:x.jsonl"\n'
        "context_window = 64\nheadroom = 16\n"
    )
    refused = send(workspace, scripted(tmp_path, "never"), "word " * 200, "--json")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")


def test_memory_list_has_a_header_and_shows_accepted_and_pending(
    kairox_home: Path, workspace: Path
) -> None:
    accepted = propose(kairox_home, workspace, "a.key", "accepted body")
    pending = propose(kairox_home, workspace, "b.key", "pending body")
    rejected = propose(kairox_home, workspace, "c.key", "rejected body")
    assert kx("memory", "approve", accepted).returncode == 0
    assert kx("memory", "reject", rejected).returncode == 0

    listed = kx("memory", "list", "--workspace", str(workspace)).stdout.splitlines()
    assert listed[0].split() == ["ID", "SCOPE", "STATUS", "KEY", "BODY"]
    shown = "\n".join(listed)
    assert accepted in shown and pending in shown and rejected not in shown
    everything = kx("memory", "list", "--workspace", str(workspace), "--status", "all").stdout
    assert rejected in everything


def test_memory_ids_accept_a_unique_prefix(kairox_home: Path, workspace: Path) -> None:
    ids = [propose(kairox_home, workspace, f"k{i}", f"body {i}") for i in range(2)]
    shared = next(i for i in range(len(ids[0])) if ids[0][i] != ids[1][i])  # >= 4: "mem_"
    unique = ids[1][: shared + 1]
    shown = json.loads(kx("memory", "show", unique, "--json").stdout)
    assert shown["id"] == ids[1]
    assert (
        json.loads(kx("memory", "show", unique.removeprefix("mem_"), "--json").stdout)["id"]
        == ids[1]
    )
    ambiguous = kx("memory", "show", ids[0][:shared])
    assert ambiguous.returncode == 1
    assert ambiguous.stderr.strip().splitlines() == [ambiguous.stderr.strip()]
    assert "ambiguous" in ambiguous.stderr


def test_kb_add_without_config_says_how_to_declare_it(workspace: Path, tmp_path: Path) -> None:
    doc = tmp_path / "policy.md"
    doc.write_text("# Policy\n\nText.\n")
    result = kx("kb", "add", "handbook", str(doc), "--workspace", str(workspace))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "[knowledge_bases.handbook]" in line and "sqlite_fts" in line


def test_context_and_profile_use_take_the_workspace(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert send(workspace, scripted(tmp_path, "hi"), "hello", "--session", "s1").returncode == 0
    shown = kx("context", "--workspace", str(workspace), "--session", "s1", "--json")
    assert shown.returncode == 0, shown.stderr
    elsewhere = kx("context", "--workspace", str(other), "--session", "s1")
    assert elsewhere.returncode == 1
    assert "no session with name 's1'" in elsewhere.stderr
    assert str(workspace.resolve()) not in elsewhere.stderr
    switched = kx("profile", "use", "local", "--workspace", str(workspace), "--session", "s1")
    assert switched.returncode == 0, switched.stderr
    refused = kx("profile", "use", "local", "--workspace", str(other), "--session", "s1")
    assert refused.returncode == 1 and "no session with name 's1'" in refused.stderr
