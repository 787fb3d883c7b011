"""Migration ``0003_session_names_per_workspace``: session names become unique per workspace.

A store made before it (names unique in the home) keeps its sessions, ids and archive state,
and afterwards a second workspace can have its own ``main``; ``kairox migrate --to`` copies two
workspaces' ``main`` sessions into Postgres.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kairox.core.ids import workspace_id_for
from kairox.core.paths import database_path
from kairox.services import Services
from kairox.store.db import Database
from kairox.store.migration import Migration
from kairox.store.migrations import ALL_MIGRATIONS
from kairox.store.sql import SqlDatabase

NEW = "0003_session_names_per_workspace"


def _before(migrations: tuple[Migration, ...]) -> list[Migration]:
    names = [m.name for m in migrations]
    assert NEW in names
    return [m for m in migrations if m.name != NEW]


def _old_rows(db: SqlDatabase, workspace: Path) -> str:
    ws_id = workspace_id_for(workspace)
    with db.atomic() as conn:
        conn.execute(
            "INSERT INTO workspaces(id, path, created_at) VALUES (?, ?, ?)",
            (ws_id, str(workspace.resolve()), "2026-01-01T00:00:00.000Z"),
        )
        conn.execute(
            "INSERT INTO sessions(id, name, workspace_id, profile, created_at, started_seq,"
            " archived) VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("ses_old", "main", ws_id, "big", "2026-01-01T00:00:00.000Z", 0, 1),
        )
    return ws_id


def _check_after(services: Services, ws_id: str, other: Path) -> None:
    old = services.sessions.get("ses_old")
    assert (old.name, old.workspace_id, old.profile, old.archived) == ("main", ws_id, "big", True)
    fresh = services.sessions.start("main", other, "local")
    assert fresh.id != "ses_old" and services.sessions.get("main", ws_id).id == "ses_old"


def test_sqlite_store_keeps_its_sessions(
    kairox_home: Path, workspace: Path, tmp_path: Path
) -> None:
    path = database_path(kairox_home)
    old = Database.open(path, _before(ALL_MIGRATIONS))
    ws_id = _old_rows(old, workspace)
    old.close()
    services = Services.open(kairox_home)
    other = tmp_path / "other"
    other.mkdir()
    _check_after(services, ws_id, other)


def test_postgres_store_keeps_its_sessions(
    kairox_home: Path, workspace: Path, tmp_path: Path, pg_url: str
) -> None:
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    old = PgDatabase.open(pg_url, _before(MIGRATIONS))
    ws_id = _old_rows(old, workspace)
    old.close()
    services = Services.open(kairox_home, store_url=pg_url)
    other = tmp_path / "other"
    other.mkdir()
    _check_after(services, ws_id, other)


def test_migrate_to_postgres_copies_each_workspaces_main(
    kairox_home: Path, workspace: Path, tmp_path: Path, pg_url: str
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    sqlite = Services.open(kairox_home)
    mine = sqlite.sessions.start("main", workspace, "local")
    theirs = sqlite.sessions.start("main", other, "big")
    done = subprocess.run(
        [sys.executable, "-m", "kairox", "--home", str(kairox_home), "migrate", "--to", pg_url],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert done.returncode == 0, done.stderr
    pg = Services.open(kairox_home, store_url=pg_url)
    assert pg.sessions.get("main", mine.workspace_id) == mine
    assert pg.sessions.get("main", theirs.workspace_id) == theirs
