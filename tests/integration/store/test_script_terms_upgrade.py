"""Migration ``0430_script_terms`` on both stores: a home indexed before words kept their
combining marks (and before Thai runs were cluster bigrams) is re-indexed when it is opened, and
loses nothing. Only its non-ASCII units are counted again and only their hashing vectors are
dropped (an English home pays one scan), the saved keyword indexes, which hold the old terms,
are dropped, and a Hindi word then finds its memory and not the one with the same letters."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import accept_workspace_memory, kx
from kairox.services import Services
from kairox.store.words import words

CAT = "मेरी बिल्ली रोज़ सर्वर के ऊपर सोती है"
BAT = "क्रिकेट का बल्ला लकड़ी का बना है"
ENGLISH = "Commit messages follow Conventional Commits"
OLD_LENGTH = 999


def test_a_home_indexed_before_marks_were_kept_is_reindexed_on_open(
    kairox_home: Path, workspace: Path, on_store: str | None
) -> None:
    cat = accept_workspace_memory(kairox_home, workspace, "pet", CAT)
    accept_workspace_memory(kairox_home, workspace, "sport", BAT)
    english = accept_workspace_memory(kairox_home, workspace, "style.commits", ENGLISH)
    ws = str(workspace)
    assert kx("memory", "search", "बिल्ली", "--workspace", ws).returncode == 0  # index built

    services = Services.open(kairox_home)
    try:
        with services.db.atomic() as conn:
            conn.execute("DELETE FROM _migrations WHERE name = '0430_script_terms'")
            conn.execute("UPDATE memory_units SET length = ?", (OLD_LENGTH,))
            conn.execute(
                "INSERT INTO keyword_snapshots(kind, scope, generation, data) VALUES (?, ?, ?, ?)",
                ("chunks", "old", 0, b"old terms"),
            )
        vectors = services.db.query_one("SELECT count(*) AS n FROM memory_unit_vectors")["n"]
        assert vectors == 3
    finally:
        services.close()

    upgraded = kx("memory", "list", "--workspace", ws, "--json")
    assert upgraded.returncode == 0, upgraded.stderr
    assert "re-indexing" in upgraded.stderr
    assert len(json.loads(upgraded.stdout)) == 3

    services = Services.open(kairox_home)
    try:
        rows = services.db.query("SELECT memory_id, key, body, length FROM memory_units")
        lengths = {r["memory_id"]: int(r["length"]) for r in rows}
        for r in rows:
            if r["memory_id"] == english:
                assert lengths[english] == OLD_LENGTH  # ASCII text: not counted again
            else:
                assert lengths[r["memory_id"]] == len(words(r["key"])) + len(words(r["body"]))
        assert services.db.query_one("SELECT count(*) AS n FROM keyword_snapshots")["n"] == 0
        missing = services.memory_index.units_missing_vectors("hashing:384", limit=10)
        assert english not in {u.memory_id for _, u in missing} and len(missing) == 2
    finally:
        services.close()

    found = kx("memory", "search", "बिल्ली", "--workspace", ws, "--json")
    assert found.returncode == 0, found.stderr
    assert [h["record"]["id"] for h in json.loads(found.stdout)][:1] == [cat]
    again = kx("memory", "list", "--workspace", ws)
    assert "re-indexing" not in again.stderr  # once
