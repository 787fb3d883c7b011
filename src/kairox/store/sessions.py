"""Sessions and workspaces: a projection of ``SessionStarted`` / ``ProfileSwitched`` /
``SessionArchived`` / ``SessionUnarchived``, plus leases.

A lease gives one process the right to run a session's turns; another process asking for the same
session gets ``SessionBusy`` (or waits). Leases expire, so a crashed holder never blocks forever.
``SessionStore`` is what the layers above depend on; ``SessionRegistry`` is its SQL implementation
(SQLite leases are rows with an expiry; the Postgres subclass holds an advisory lock instead).
"""

from __future__ import annotations

import builtins
import os
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path

from kairox.core.clock import Clock, isoformat, parse_iso
from kairox.core.errors import InvalidInput, NotFound, SessionBusy
from kairox.core.events import (
    ProfileSwitched,
    SessionArchived,
    SessionStarted,
    SessionUnarchived,
)
from kairox.core.ids import new_id, workspace_id_for
from kairox.store.protocols import EventStore
from kairox.store.records import SessionInfo
from kairox.store.sql import SqlConnection, SqlDatabase, SqlRow


class SessionRegistry:
    """``SessionStore`` in SQL; leases are rows with an expiry time."""

    def __init__(self, db: SqlDatabase, events: EventStore, clock: Clock) -> None:
        self.db = db
        self.events = events
        self.clock = clock

    def ensure_workspace(self, path: str | Path) -> str:
        resolved = str(Path(path).expanduser().resolve())
        ws_id = workspace_id_for(resolved)
        with self.db.atomic() as conn:
            conn.execute(
                "INSERT INTO workspaces(id, path, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (ws_id, resolved, isoformat(self.clock.now())),
            )
        return ws_id

    def workspace_path(self, workspace_id: str) -> str:
        row = self.db.query_one("SELECT path FROM workspaces WHERE id = ?", (workspace_id,))
        if row is None:
            raise NotFound("workspace", workspace_id)
        return str(row["path"])

    def start(self, name: str, workspace: str | Path, profile: str) -> SessionInfo:
        """Create the session ``name`` in ``workspace``, or return it if it exists there. Names
        are unique per workspace: another workspace's session of that name is another session."""
        if not name.strip():
            raise InvalidInput("a session name cannot be empty")
        ws_id = self.ensure_workspace(workspace)
        with self.db.atomic() as conn:
            existing = self._lookup(conn, name, ws_id)
            if existing is not None:
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
        return self.get(session_id)

    def get(self, name_or_id: str, workspace_id: str | None = None) -> SessionInfo:
        info = self.find(name_or_id, workspace_id)
        if info is None:
            raise NotFound("session", name_or_id, by="name")
        return info

    def find(self, name_or_id: str, workspace_id: str | None = None) -> SessionInfo | None:
        with self.db.read() as conn:
            return self._lookup(conn, name_or_id, workspace_id)

    def named(self, name: str) -> builtins.list[SessionInfo]:
        rows = self.db.query(_SELECT + " WHERE s.name = ? ORDER BY s.started_seq", (name,))
        return [_info(r) for r in rows]

    def list(
        self, workspace_id: str | None = None, *, include_archived: bool = False
    ) -> builtins.list[SessionInfo]:
        where: builtins.list[str] = []
        params: builtins.list[object] = []
        if workspace_id is not None:
            where.append("s.workspace_id = ?")
            params.append(workspace_id)
        if not include_archived:
            where.append("s.archived = 0")
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
        return [_info(r) for r in self.db.query(sql + " ORDER BY s.started_seq", params)]

    def archive(
        self,
        name_or_id: str,
        discard: Callable[[str], builtins.list[str]],
        workspace_id: str | None = None,
    ) -> SessionInfo:
        """Archive the session: ``discard(session_id)`` deletes its session memories (an event
        each) in the same transaction, then ``SessionArchived`` names them. Archiving twice is a
        no-op."""
        with self.db.atomic() as conn:
            info = self._lookup(conn, name_or_id, workspace_id)
            if info is None:
                raise NotFound("session", name_or_id, by="name")
            if not info.archived:
                discarded = discard(info.id)
                self.events.append(
                    SessionArchived(name=info.name, discarded=tuple(discarded)),
                    session_id=info.id,
                    workspace_id=info.workspace_id,
                )
                conn.execute("UPDATE sessions SET archived = 1 WHERE id = ?", (info.id,))
        return self.get(info.id)

    def unarchive(self, name_or_id: str, workspace_id: str | None = None) -> SessionInfo:
        """Make the session usable again; its discarded memories stay discarded."""
        with self.db.atomic() as conn:
            info = self._lookup(conn, name_or_id, workspace_id)
            if info is None:
                raise NotFound("session", name_or_id, by="name")
            if info.archived:
                self.events.append(
                    SessionUnarchived(name=info.name),
                    session_id=info.id,
                    workspace_id=info.workspace_id,
                )
                conn.execute("UPDATE sessions SET archived = 0 WHERE id = ?", (info.id,))
        return self.get(info.id)

    def switch_profile(
        self, name_or_id: str, profile: str, workspace_id: str | None = None
    ) -> SessionInfo:
        with self.db.atomic() as conn:
            info = self._lookup(conn, name_or_id, workspace_id)
            if info is None:
                raise NotFound("session", name_or_id, by="name")
            if info.profile != profile:
                self.events.append(
                    ProfileSwitched(from_profile=info.profile, to_profile=profile),
                    session_id=info.id,
                    workspace_id=info.workspace_id,
                )
                conn.execute("UPDATE sessions SET profile = ? WHERE id = ?", (profile, info.id))
        return self.get(info.id)

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
                if (
                    row is None
                    or row["holder"] == holder
                    or row["expires_at"] < now
                    or holder_is_dead(str(row["holder"]))
                ):
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
        return f"pid:{os.getpid()}:{new_id('h')}@{socket.gethostname()}"

    def _lookup(
        self, conn: SqlConnection, name_or_id: str, workspace_id: str | None
    ) -> SessionInfo | None:
        """By id (ids are unique in the home), else by name; with ``workspace_id`` both only
        among that workspace's sessions (another workspace's id or name is not found); without
        one a name must belong to one session only."""
        if workspace_id is not None:
            row = conn.execute(
                _SELECT + " WHERE s.workspace_id = ? AND (s.id = ? OR s.name = ?)"
                " ORDER BY CASE WHEN s.id = ? THEN 0 ELSE 1 END",
                (workspace_id, name_or_id, name_or_id, name_or_id),
            ).fetchone()
            return _info(row) if row else None
        row = conn.execute(_SELECT + " WHERE s.id = ?", (name_or_id,)).fetchone()
        if row is not None:
            return _info(row)
        rows = conn.execute(_SELECT + " WHERE s.name = ?", (name_or_id,)).fetchall()
        if len(rows) > 1:
            places = ", ".join(sorted(str(r["workspace_path"]) for r in rows))
            raise InvalidInput(
                f"session name '{name_or_id}' is used in {len(rows)} workspaces ({places}); "
                "name the workspace"
            )
        return _info(rows[0]) if rows else None


_SELECT = (
    "SELECT s.id, s.name, s.workspace_id, w.path AS workspace_path, s.profile, s.created_at,"
    " s.started_seq, s.archived FROM sessions s JOIN workspaces w ON w.id = s.workspace_id"
)


def _info(row: SqlRow) -> SessionInfo:
    return SessionInfo(
        id=row["id"],
        name=row["name"],
        workspace_id=row["workspace_id"],
        workspace_path=row["workspace_path"],
        profile=row["profile"],
        created_at=parse_iso(row["created_at"]),
        started_seq=int(row["started_seq"]),
        archived=bool(row["archived"]),
    )


_HOLDER = re.compile(r"^pid:(?P<pid>\d+):[^@]*@(?P<host>.+)$")


def holder_is_dead(holder: str) -> bool:
    """True when ``holder`` names a process on this machine that no longer exists, so its lease
    can be taken over at once instead of waiting for it to expire."""
    found = _HOLDER.match(holder)
    if found is None or found.group("host") != socket.gethostname():
        return False
    try:
        os.kill(int(found.group("pid")), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False
    return False
