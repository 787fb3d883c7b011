"""``kairox memory search`` and ``memory list --search`` in a real subprocess: search by meaning,
substring matches first, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import accept_workspace_memory, kx


def test_search_by_meaning_through_the_cli(kairox_home: Path, workspace: Path) -> None:
    (workspace / ".kairox").mkdir()
    (workspace / ".kairox" / "config.toml").write_text(
        '[retrieval]\nembedder = "sentence-transformers:all-MiniLM-L6-v2"\n', encoding="utf-8"
    )
    accept_workspace_memory(
        kairox_home, workspace, "style.commits", "Commit messages follow Conventional Commits"
    )
    pg = accept_workspace_memory(
        kairox_home, workspace, "db.engine", "This project uses PostgreSQL 17"
    )
    accept_workspace_memory(
        kairox_home, workspace, "diet", "The user is vegetarian and does not eat meat"
    )
    ws = str(workspace)

    found = kx("memory", "search", "which database do we use", "--workspace", ws, "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits[0]["record"]["id"] == pg and 0.0 < hits[0]["score"] <= 1.0
    assert set(hits[0]) == {"record", "score"}

    listed = kx("memory", "list", "--search", "food preferences", "--workspace", ws, "--json")
    assert json.loads(listed.stdout)[0]["body"].startswith("The user is vegetarian")

    # Without an embedder of meaning (the default ``hashing``), keywords still rank.
    other = workspace.parent / "other"
    other.mkdir()
    accept_workspace_memory(kairox_home, other, "db.engine", "This project uses PostgreSQL 17")
    accept_workspace_memory(kairox_home, other, "db.backup", "The database is backed up nightly")
    table = kx("memory", "search", "which postgresql", "--workspace", str(other), "--k", "1")
    assert table.returncode == 0 and "PostgreSQL 17" in table.stdout
    assert len(table.stdout.strip().splitlines()) == 2  # header + one hit

    scoped = kx("memory", "search", "database", "--scope", "user", "--workspace", ws)
    assert scoped.returncode == 0 and scoped.stdout.strip() == "no memories match"

    bad = kx("memory", "search", "database", "--k", "0", "--workspace", ws)
    assert bad.returncode != 0
    assert len(bad.stderr.strip().splitlines()) == 1 and "k must be at least 1" in bad.stderr
