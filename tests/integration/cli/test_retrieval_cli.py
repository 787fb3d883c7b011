"""``kairox index``, ``search`` and ``kb`` through the real binary."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import kx


def test_index_then_search_the_workspace(workspace: Path) -> None:
    (workspace / "deploy.md").write_text("Deploys run through the blue-green pipeline.\n")
    (workspace / "cooking.md").write_text("Simmer the onions slowly in butter.\n")
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (workspace / ".gitignore").write_text("secret.txt\n")
    (workspace / "secret.txt").write_text("blue-green secret\n")
    summary = json.loads(kx("index", str(workspace), "--json").stdout)
    assert summary["files"] >= 2 and summary["chunks"] >= 2
    assert any(s["path"].endswith("blob.bin") for s in summary["skipped"])
    plain = kx("index", str(workspace))
    assert plain.returncode == 0 and "unchanged" in plain.stdout and "time:" in plain.stdout
    hits = json.loads(
        kx("search", "blue-green deploys", "--workspace", str(workspace), "--json").stdout
    )
    assert hits[0]["path"] == "deploy.md"
    assert hits[0]["source"] == f"workspace:{workspace.resolve()}"
    assert {"source", "path", "start_line", "end_line", "score", "snippet"} <= set(hits[0])
    assert all(h["path"] != "secret.txt" for h in hits)
    odd = kx("search", '"unbalanced NEAR * -(', "--workspace", str(workspace), "--json")
    assert odd.returncode == 0, odd.stderr


def test_kb_add_list_and_search(workspace: Path, tmp_path: Path) -> None:
    cfg = workspace / ".kairox" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text('[knowledge_bases.handbook]\nkind = "sqlite_fts"\npath = "handbook.db"\n')
    doc = tmp_path / "vacation.md"
    doc.write_text("# Vacation policy\n\nEmployees get 30 days of paid vacation.\n")
    added = kx("kb", "add", "handbook", str(doc), "--workspace", str(workspace))
    assert added.returncode == 0, added.stderr
    listed = json.loads(kx("kb", "list", "--workspace", str(workspace), "--json").stdout)
    assert [(k["id"], k["kind"], k["documents"]) for k in listed] == [("handbook", "sqlite_fts", 1)]
    hits = json.loads(
        kx(
            "kb", "search", "handbook", "paid vacation", "--workspace", str(workspace), "--json"
        ).stdout
    )
    assert hits and hits[0]["source"] == "kb:handbook" and "30 days" in hits[0]["snippet"]
    both = json.loads(kx("search", "vacation days", "--workspace", str(workspace), "--json").stdout)
    assert any(h["source"] == "kb:handbook" for h in both)
    missing = kx("kb", "search", "nope", "x", "--workspace", str(workspace))
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1
