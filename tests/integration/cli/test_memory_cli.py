"""The real ``kairox`` binary against a real home directory."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import kx
from kairox.core.ids import workspace_id_for
from kairox.core.types import MemoryScope
from kairox.services import Services


def _propose(home: Path, workspace: Path, scope: MemoryScope, key: str | None, body: str) -> str:
    services = Services.open(home)
    try:
        return services.memories.propose(
            scope, key, body, workspace_id=workspace_id_for(workspace), session_id="ses_cli", turn=1
        ).id
    finally:
        services.close()


def test_list_approve_edit_history_undo(kairox_home: Path, workspace: Path) -> None:
    mid = _propose(kairox_home, workspace, MemoryScope.WORKSPACE, "commit.style", "Conventional")
    listed = json.loads(kx("memory", "list", "--workspace", str(workspace), "--json").stdout)
    assert [m["id"] for m in listed] == [mid]
    assert set(listed[0]) >= {
        "id",
        "scope",
        "key",
        "body",
        "status",
        "workspace_id",
        "session_id",
        "created_at",
        "updated_at",
        "approved_at",
    }
    assert listed[0]["status"] == "pending" and listed[0]["approved_at"] is None

    assert kx("memory", "approve", mid).returncode == 0
    shown = json.loads(kx("memory", "show", mid, "--json").stdout)
    assert shown["status"] == "accepted" and shown["approved_at"]

    assert kx("memory", "edit", mid, "--body", "Conventional Commits").returncode == 0
    history = json.loads(kx("memory", "history", mid, "--json").stdout)
    assert [h["action"] for h in history] == ["propose", "accept", "edit"]
    assert kx("memory", "undo", mid).returncode == 0
    assert json.loads(kx("memory", "show", mid, "--json").stdout)["body"] == "Conventional"

    assert kx("memory", "delete", mid).returncode == 0
    accepted = kx("memory", "list", "--workspace", str(workspace), "--status", "accepted", "--json")
    assert json.loads(accepted.stdout) == []


def test_errors_are_one_line_and_change_nothing(kairox_home: Path, workspace: Path) -> None:
    mid = _propose(kairox_home, workspace, MemoryScope.USER, "editor.font", "Mono")
    assert kx("memory", "reject", mid).returncode == 0
    before = kx("events", "--json").stdout

    for args, needle in [
        (("memory", "approve", mid), "already rejected"),
        (("memory", "show", "mem_missing"), "no memory with id 'mem_missing'"),
        (("memory", "list", "--scope", "global"), "unknown memory scope 'global'"),
        (("memory", "list", "--status", "maybe"), "unknown memory status 'maybe'"),
    ]:
        result = kx(*args)
        assert result.returncode != 0, args
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], result.stderr
    assert kx("events", "--json").stdout == before


def test_events_json_shape_and_after(kairox_home: Path, workspace: Path) -> None:
    _propose(kairox_home, workspace, MemoryScope.SESSION, None, "a fact")
    events = json.loads(kx("events", "--json").stdout)
    assert [e["type"] for e in events] == ["MemoryProposed"]
    assert set(events[0]) >= {"seq", "type", "ts", "session_id", "payload"}
    after = json.loads(kx("events", "--after", str(events[0]["seq"]), "--json").stdout)
    assert after == []


def test_export_then_import_into_another_home(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    mid = _propose(kairox_home, workspace, MemoryScope.WORKSPACE, "style", "Black, 100 cols")
    assert kx("memory", "approve", mid).returncode == 0
    out = tmp_path / "memories.md"
    result = kx(
        "memory", "export", "--workspace", str(workspace), "--format", "markdown", "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert "Black, 100 cols" in out.read_text()
    other_home = tmp_path / "other-home"
    imported = kx(
        "--home", str(other_home), "memory", "import", str(out), "--workspace", str(workspace)
    )
    assert imported.returncode == 0, imported.stderr
    assert "created 1" in imported.stdout
    listed = json.loads(
        kx(
            "--home", str(other_home), "memory", "list", "--workspace", str(workspace), "--json"
        ).stdout
    )
    assert [(m["key"], m["body"], m["status"]) for m in listed] == [
        ("style", "Black, 100 cols", "accepted")
    ]
    events = json.loads(kx("--home", str(other_home), "events", "--json").stdout)
    assert [e["type"] for e in events][-2:] == ["MemoryProposed", "MemoryAccepted"]
