"""Sessions and workspaces: a projection of ``SessionStarted`` / ``ProfileSwitched``, plus leases.

A lease gives one process the right to run a session's turns; another process asking for the same
session gets ``SessionBusy`` (or waits). Leases expire, so a crashed holder never blocks forever.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kairox.core.clock import Clock, isoformat, parse_iso
from kairox.core.errors import InvalidInput, NotFound, SessionBusy
from kairox.core.events import ProfileSwitched, SessionStarted
from kairox.core.ids import new_id, workspace_id_for
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    name: str
    workspace_id: str
    workspace_path: str
    profile: str
    created_at: datetime
    started_seq: int


class SessionRegistry:
    def __init__(self, db: Database, events: SqliteEventStore, clock: Clock) -> None:
        self.db = db
        self.events = events
        self.clock = clock

    def ensure_workspace(self, path: str | Path) -> str:
        resolved = str(Path(path).expanduser().resolve())
        ws_id = workspace_id_for(resolved)
        with self.db.atomic() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO workspaces(id, path, created_at) VALUES (?, ?, ?)",
                (ws_id, resolved, isoformat(self.clock.now())),
            )
        return ws_id

    def workspace_path(self, workspace_id: str) -> str:
        row = self.db.query_one("SELECT path FROM workspaces WHERE id = ?", (workspace_id,))
        if row is None:
            raise NotFound("workspace", workspace_id)
        return str(row["path"])

    def start(self, name: str, workspace: str | Path, profile: str) -> SessionInfo:
        """Create the session ``name`` in ``workspace``, or return it if it exists there."""
        if not name.strip():
            raise InvalidInput("a session name cannot be empty")
        ws_id = self.ensure_workspace(workspace)
        with self.db.atomic() as conn:
            existing = self._by_name(conn, name)
            if existing is not None:
                if existing.workspace_id != ws_id:
                    raise InvalidInput(
                        f"session '{name}' belongs to workspace {existing.workspace_path}; "
                        "pick another --session name or run from that workspace"
                    )
                return existing
            session_id = new_id("ses")
            event = self.events.append(
                SessionStarted(
                    name=name, workspace_path=self.workspace_path(ws_id), profile=profile
                ),
                session_id=session_id,
                workspace_id=ws_id,
            )
            conn.execute(
                "INSERT INTO sessions(id, name, workspace_id, profile, created_at, started_seq)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, name, ws_id, profile, isoformat(event.ts), event.seq),
            )
        return self.get(name)

    def get(self, name_or_id: str) -> SessionInfo:
        with self.db.read() as conn:
            info = self._by_name(conn, name_or_id)
            if info is None:
                row = conn.execute(_SELECT + " WHERE s.id = ?", (name_or_id,)).fetchone()
                info = _info(row) if row else None
        if info is None:
            raise NotFound("session", name_or_id, by="name")
        return info

    def find(self, name: str) -> SessionInfo | None:
        with self.db.read() as conn:
            return self._by_name(conn, name)

    def list(self, workspace_id: str | None = None) -> list[SessionInfo]:
        if workspace_id is None:
            rows = self.db.query(_SELECT + " ORDER BY s.started_seq")
        else:
            rows = self.db.query(
                _SELECT + " WHERE s.workspace_id = ? ORDER BY s.started_seq", (workspace_id,)
            )
        return [_info(r) for r in rows]

    def switch_profile(self, name: str, profile: str) -> SessionInfo:
        with self.db.atomic() as conn:
            info = self._by_name(conn, name)
            if info is None:
                raise NotFound("session", name, by="name")
            if info.profile != profile:
                self.events.append(
                    ProfileSwitched(from_profile=info.profile, to_profile=profile),
                    session_id=info.id,
                    workspace_id=info.workspace_id,
                )
                conn.execute("UPDATE sessions SET profile = ? WHERE id = ?", (profile, info.id))
        return self.get(name)

    # -- leases -----------------------------------------------------------------------

    def acquire_lease(
        self, session_id: str, holder: str, *, ttl_s: float = 30.0, wait_s: float = 0.0
    ) -> None:
        """Take the session's lease for ``holder``, waiting up to ``wait_s`` for another holder."""
        deadline = time.monotonic() + wait_s
        while True:
            now = time.time()
            with self.db.atomic() as conn:
                row = conn.execute(
                    "SELECT holder, expires_at FROM session_leases WHERE session_id = ?",
                    (session_id,),
                ).fetchone()
                if row is None or row["holder"] == holder or row["expires_at"] < now:
                    conn.execute(
                        "INSERT OR REPLACE INTO session_leases(session_id, holder, expires_at)"
                        " VALUES (?, ?, ?)",
                        (session_id, holder, now + ttl_s),
                    )
                    return
                other = str(row["holder"])
            if time.monotonic() >= deadline:
                name = self.get(session_id).name
                raise SessionBusy(name, other)
            time.sleep(0.05)

    def renew_lease(self, session_id: str, holder: str, *, ttl_s: float = 30.0) -> None:
        self.db.execute(
            "UPDATE session_leases SET expires_at = ? WHERE session_id = ? AND holder = ?",
            (time.time() + ttl_s, session_id, holder),
        )

    def release_lease(self, session_id: str, holder: str) -> None:
        with self.db.atomic() as conn:
            conn.execute(
                "DELETE FROM session_leases WHERE session_id = ? AND holder = ?",
                (session_id, holder),
            )

    @staticmethod
    def default_holder() -> str:
        return f"pid:{os.getpid()}:{new_id('h')}"

    def _by_name(self, conn: sqlite3.Connection, name: str) -> SessionInfo | None:
        row = conn.execute(_SELECT + " WHERE s.name = ?", (name,)).fetchone()
        return _info(row) if row else None


_SELECT = (
    "SELECT s.id, s.name, s.workspace_id, w.path AS workspace_path, s.profile, s.created_at,"
    " s.started_seq FROM sessions s JOIN workspaces w ON w.id = s.workspace_id"
)


def _info(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(
        id=row["id"],
        name=row["name"],
        workspace_id=row["workspace_id"],
        workspace_path=row["workspace_path"],
        profile=row["profile"],
        created_at=parse_iso(row["created_at"]),
        started_seq=int(row["started_seq"]),
    )
