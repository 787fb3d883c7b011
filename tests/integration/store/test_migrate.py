"""``kairox migrate --to postgresql://...``: a SQLite home copied into Postgres, twice.

Events, memories (with versions, redirects and undo state), sessions and the search results of
the workspace index are the same before and after; a second run copies nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kairox.core.events import UserMessageAdded
from kairox.core.records import MemoryView
from kairox.core.types import Actor, MemoryScope
from kairox.retrieval.workspace import WorkspaceRagIndex
from kairox.services import Services

FILES = {
    "notes/garden.md": "The tomato seedlings need watering every morning before the heat.\n",
    "src/engine.py": "def combustion_chamber(pressure):\n    return pressure * 2\n",
    "docs/ops.md": "Rotate the zookeeper credentials quarterly and page the oncall team.\n",
}
QUERIES = ("tomato watering", "combustion chamber pressure", "zookeeper credentials")


def _fill(home: Path, workspace: Path) -> Services:
    for rel, text in FILES.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    services = Services.open(home)
    session = services.sessions.start("main", workspace, "local")
    for turn in (1, 2):
        services.events.append(
            UserMessageAdded(turn=turn, text=f"question {turn}"),
            session_id=session.id,
            workspace_id=session.workspace_id,
        )
    memories = services.memories
    ws = session.workspace_id
    first = memories.propose(MemoryScope.WORKSPACE, "lang", "Python", workspace_id=ws,
                             session_id=session.id, turn=1)  # fmt: skip
    memories.accept(first.id, actor=Actor.USER)
    second = memories.propose(MemoryScope.WORKSPACE, "lang", "Rust", workspace_id=ws,
                              session_id=session.id, turn=2)  # fmt: skip
    memories.accept(second.id, actor=Actor.USER)  # folds into the first: a redirect
    memories.edit(first.id, "Rust and Python", actor=Actor.USER)
    memories.undo(first.id, actor=Actor.USER)
    rejected = memories.propose(MemoryScope.USER, "editor", "vim", workspace_id=ws,
                                session_id=session.id)  # fmt: skip
    memories.reject(rejected.id, actor=Actor.USER, reason="no")
    WorkspaceRagIndex(services.chunks, workspace).index_sync()
    return services


def _snapshot(services: Services, workspace: Path) -> dict[str, object]:
    session = services.sessions.get("main")
    view = MemoryView(workspace_id=session.workspace_id, session_id=session.id)
    records = services.memories.list(view, all_sessions=True)
    index = WorkspaceRagIndex(services.chunks, workspace)
    return {
        "events": services.events.read(),
        "session": session,
        "memories": records,
        "histories": {r.id: services.memories.history(r.id) for r in records},
        "redirected": services.memories.get(
            services.events.read(types=["MemoryAccepted"])[-1].payload.memory_id  # type: ignore[union-attr]
        ),
        "search": {q: [(h.path, h.start_line) for h in index.search_sync(q, k=1)] for q in QUERIES},
    }


def _migrate(home: Path, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kairox", "--home", str(home), "migrate", "--to", url],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "120"},
    )


def test_migrate_round_trip_is_lossless_and_idempotent(
    kairox_home: Path, workspace: Path, pg_url: str
) -> None:
    sqlite = _fill(kairox_home, workspace)
    before = _snapshot(sqlite, workspace)
    assert all(before["search"][q] for q in QUERIES)  # type: ignore[index]

    first = _migrate(kairox_home, pg_url)
    assert first.returncode == 0, first.stderr
    assert "MISSING" not in first.stdout and "memory_versions" in first.stdout
    assert "events" in first.stderr  # the progress bars

    pg = Services.open(kairox_home, store_url=pg_url)
    assert _snapshot(pg, workspace) == before

    again = _migrate(kairox_home, pg_url)
    assert again.returncode == 0, again.stderr
    rows = [line.split("│") for line in again.stdout.splitlines() if "│" in line]
    copied_now = {cells[1].strip(): cells[4].strip() for cells in rows if len(cells) > 5}
    assert copied_now["events"] == "0" and copied_now["chunks"] == "0"
    assert _snapshot(pg, workspace) == before

    # The copy is a working store: new events continue the sequence.
    last = pg.events.last_seq()
    added = pg.events.append(UserMessageAdded(turn=3, text="after"), session_id=None,
                             workspace_id=None)  # fmt: skip
    assert added.seq == last + 1


def test_migrate_refuses_a_foreign_log(kairox_home: Path, workspace: Path, pg_url: str) -> None:
    other = Services.open(store_url=pg_url)
    other.events.append(UserMessageAdded(turn=1, text="not yours"), session_id=None,
                        workspace_id=None)  # fmt: skip
    _fill(kairox_home, workspace)
    refused = _migrate(kairox_home, pg_url)
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert "different event log" in lines[-1]
