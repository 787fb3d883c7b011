"""Migration ``0400_cjk_terms`` on both stores: a home indexed before words were CJK-aware (a
Chinese clause one term) is re-indexed when it is opened, with a progress line, and loses
nothing: its memories, events and texts stay, its unit lengths are the new
terms', its hashing vectors are embedded again, and Chinese questions find it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import kx
from kairox.core.ids import workspace_id_for
from kairox.core.types import Actor, MemoryScope
from kairox.services import Services
from kairox.store.words import words

MEMORY = "我们的项目使用 PostgreSQL 17 数据库"
SAID = "我的猫叫小橘，它喜欢睡在服务器上。"


def kx_at(home: Path, url: str | None, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI with ``home`` as its home and ``url`` (or SQLite) as its store."""
    env = {"KAIROX_HOME": str(home), **({"KAIROX_STORE_URL": url} if url else {})}
    return kx(*args, cwd=cwd, env=env, unset=() if url else ("KAIROX_STORE_URL",))


def _scripted(workspace: Path) -> None:
    path = workspace.parent / "script.jsonl"
    path.write_text(json.dumps({"text": "好的，记住了。"}) + "\n", encoding="utf-8")
    config = workspace / ".kairox" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(
        f'[profiles.local]\nmodel = "scripted:{path}"\n[retrieval]\nworkspace_index = false\n'
    )


def _as_before(services: Services) -> None:
    """Put the home back as the code before the change left it: the migration not applied and
    every stored length that of whole clauses."""
    with services.db.atomic() as conn:
        conn.execute("DELETE FROM _migrations WHERE name = '0400_cjk_terms'")
        conn.execute("DROP INDEX history_units_unindexed")
        conn.execute("DROP INDEX memory_units_unindexed")
        conn.execute("UPDATE history_units SET length = 3")
        conn.execute("UPDATE memory_units SET length = 5")
        conn.execute("UPDATE history_workspaces SET length_sum = 3 * unit_count")


def test_a_home_indexed_before_cjk_terms_is_reindexed_on_open(
    workspace: Path, tmp_path: Path, store_url: str | None
) -> None:
    home = tmp_path / "home"
    _scripted(workspace)
    sent = kx_at(home, store_url, "send", "--session", "chat", SAID, cwd=workspace)
    assert sent.returncode == 0, sent.stderr
    services = Services.open(home, store_url=store_url)
    try:
        record = services.memories.propose(
            MemoryScope.WORKSPACE,
            "项目.数据库",
            MEMORY,
            workspace_id=workspace_id_for(workspace),
            session_id=None,
        )
        memory_id = services.memories.accept(record.id, actor=Actor.USER).id
    finally:
        services.close()
    # Both indexes are built (units and hashing vectors) by a search of each.
    assert kx_at(home, store_url, "recall", "猫", cwd=workspace).returncode == 0
    assert kx_at(home, store_url, "memory", "search", "数据库", cwd=workspace).returncode == 0

    services = Services.open(home, store_url=store_url)
    events_before = len(services.events.read())
    _as_before(services)
    services.close()

    upgraded = kx_at(home, store_url, "memory", "list", "--json", cwd=workspace)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "re-indexing" in upgraded.stderr and "units" in upgraded.stderr
    assert [m["id"] for m in json.loads(upgraded.stdout)] == [memory_id]

    services = Services.open(home, store_url=store_url)
    try:
        assert len(services.events.read()) == events_before
        rows = services.db.query("SELECT content, context, speaker, length FROM history_units")
        assert rows and all(
            int(r["length"])
            == sum(len(words(str(r[f]))) for f in ("content", "context", "speaker"))
            for r in rows
        )
        unit = services.db.query_one("SELECT key, body, length FROM memory_units")
        assert int(unit["length"]) == len(words(unit["key"])) + len(words(unit["body"]))
        total = services.db.query_one("SELECT sum(length) AS n FROM history_units")["n"]
        assert services.db.query_one("SELECT length_sum AS n FROM history_workspaces")["n"] == total
        # The hashing vectors were dropped, to be embedded again from the new terms.
        missing = services.memory_index.units_missing_vectors("hashing:384", limit=10)
        assert [u.memory_id for _, u in missing] == [memory_id]
    finally:
        services.close()

    found = kx_at(home, store_url, "memory", "search", "我们用什么数据库", "--json", cwd=workspace)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["record"]["id"] == memory_id
    recalled = kx_at(home, store_url, "recall", "我的猫叫什么名字", "--json", cwd=workspace)
    assert json.loads(recalled.stdout)["hits"][0]["snippet"] == SAID
    again = kx_at(home, store_url, "memory", "list", cwd=workspace)
    assert "re-indexing" not in again.stderr  # once
