"""The read side of the SQL ``MemoryStore``: records, their history and the listings.

``SqlMemoryStore`` (``kairox.store.memories``) inherits it. A listing shows one row per key: a
key's rejected proposals and deleted rows stay out of it while the key has an accepted (live) row,
and that row's history holds them, so a person sees the key's live row and what was proposed for
it. Asking for rejected or deleted memories only (no accepted ones) still lists them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from kairox.core.errors import NotFound
from kairox.core.events import EventPayload
from kairox.core.records import USER_OWNER, MemoryRecord, MemoryVersion, MemoryView
from kairox.core.types import MemoryScope, MemoryStatus
from kairox.store.memory_rows import (
    SELECT_WITH_REPLACES,
    identical_row,
    owner_for,
    record_of,
    resolve_id,
    unique_prefix,
    version_of,
)
from kairox.store.protocols import EventStore
from kairox.store.sql import IN_BATCH, SqlConnection, SqlDatabase, SqlRow

UNDOABLE = ("edit", "replace", "delete")

# The most accepted memories one turn considers (and traces). A memory quota of a quarter of a
# 128k window holds a few hundred; an import of 200,000 must not make every turn rank them all.
CONTEXT_MEMORIES = 1000

# A row superseded by its key's live row: a rejected proposal, or a deleted memory, of a key that
# has an accepted row now. Listings leave it out; the live row's history holds it.
SUPERSEDED = (
    "m.status IN ('rejected', 'deleted') AND m.key IS NOT NULL AND EXISTS (SELECT 1 FROM memories l"
    " WHERE l.scope = m.scope AND l.owner = m.owner AND l.key = m.key AND l.status = 'accepted')"
)


class MemoryReads:
    """Reads of the memory projection (``get``, ``history``, ``list``, ...)."""

    _LOCK_ROW = ""
    db: SqlDatabase
    events: EventStore

    def _row(self, conn: SqlConnection, memory_id: str, *, lock: bool = False) -> SqlRow:
        """The memory's row (following redirects); ``lock`` holds it for this transaction."""
        suffix = self._LOCK_ROW if lock else ""
        resolved = resolve_id(conn, unique_prefix(conn, memory_id))
        while True:
            row: SqlRow | None = conn.execute(
                "SELECT * FROM memories WHERE id = ?" + suffix, (resolved,)
            ).fetchone()
            if row is not None:
                return row
            # A concurrent accept may have folded the row into its key's row while we waited.
            again = resolve_id(conn, memory_id)
            if again == resolved:
                raise NotFound("memory", memory_id)
            resolved = again

    def _append(
        self, payload: EventPayload, *, session_id: str | None, workspace_id: str | None
    ) -> int:
        return self.events.append(payload, session_id=session_id, workspace_id=workspace_id).seq

    def get(self, memory_id: str, *, workspace_id: str | None = None) -> MemoryRecord:
        """The memory ``memory_id`` names: an exact id in one query; otherwise a unique prefix,
        or an id folded into another row, resolved first. (A live row never has a redirect:
        one is written only when its row is folded away.) With ``workspace_id``, a memory of
        another workspace or its sessions is not found."""
        sql = SELECT_WITH_REPLACES + " WHERE m.id = ?"
        with self.db.read() as conn:
            full = conn.execute(sql, (memory_id,)).fetchone()
            if full is None:
                prefix = unique_prefix(conn, memory_id, workspace_id)
                row = self._row(conn, prefix)
                full = conn.execute(sql, (row["id"],)).fetchone()
            record = record_of(full)
        if workspace_id is not None and not (
            record.scope is MemoryScope.USER or record.workspace_id == workspace_id
        ):
            raise NotFound("memory", memory_id)
        return record

    def get_many(self, memory_ids: Sequence[str]) -> builtins.list[MemoryRecord]:
        """The rows of these exact ids, in their order; ids without a row (folded into another,
        or unknown) are left out."""
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, MemoryRecord] = {}
        for start in range(0, len(ids), IN_BATCH):
            batch = ids[start : start + IN_BATCH]
            rows = self.db.query(
                SELECT_WITH_REPLACES + f" WHERE m.id IN ({','.join('?' * len(batch))})", batch
            )
            found.update((str(r["id"]), record_of(r)) for r in rows)
        return [found[i] for i in ids if i in found]

    def identical(
        self,
        scope: MemoryScope,
        key: str | None,
        body: str,
        *,
        workspace_id: str | None,
        session_id: str | None,
    ) -> MemoryRecord | None:
        """The accepted memory, or the pending proposal, that already says exactly this."""
        owner = owner_for(scope, workspace_id, session_id)
        with self.db.read() as conn:
            row = identical_row(conn, scope, owner, key, body.strip())
            return self.get(row["id"]) if row is not None else None

    def undoable(self, memory_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), IN_BATCH):
            batch = ids[start : start + IN_BATCH]
            rows = self.db.query(
                "SELECT DISTINCT memory_id FROM memory_versions WHERE undone = 0"
                f" AND action IN ({','.join('?' * len(UNDOABLE))})"
                f" AND memory_id IN ({','.join('?' * len(batch))})",
                [*UNDOABLE, *batch],
            )
            found.update(str(r["memory_id"]) for r in rows)
        return found

    def history(self, memory_id: str) -> list[MemoryVersion]:
        with self.db.read() as conn:
            row = self._row(conn, memory_id)
            sources = [row["id"]] + [
                r["from_id"]
                for r in conn.execute(
                    "SELECT from_id FROM memory_redirects WHERE to_id = ?", (row["id"],)
                )
            ]
            if row["status"] == MemoryStatus.ACCEPTED.value and row["key"] is not None:
                sources += [  # the key's rejected proposals and earlier, deleted rows
                    r["id"]
                    for r in conn.execute(
                        "SELECT id FROM memories WHERE scope = ? AND owner = ? AND key = ?"
                        " AND status IN ('rejected', 'deleted')",
                        (row["scope"], row["owner"], row["key"]),
                    )
                ]
            marks = ",".join("?" * len(sources))
            rows = conn.execute(
                f"SELECT * FROM memory_versions WHERE memory_id IN ({marks}) ORDER BY event_seq",
                sources,
            ).fetchall()
        return [version_of(r) for r in rows]

    def list(
        self,
        view: MemoryView,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        statuses: Sequence[MemoryStatus] | None = None,
        text: str | None = None,
        all_sessions: bool = False,
        newest: int | None = None,
        ids: Sequence[str] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Memories visible from ``view``, one row per key (``SUPERSEDED`` rows stay out while
        accepted memories are listed). Session memories of other sessions of the same
        workspace are included only with ``all_sessions``; ``newest`` keeps only that many of
        the most recently updated (still listed in creation order); ``ids`` only those of
        these ids (a search's ranked memories), read ``IN_BATCH`` ids a statement."""
        if ids is not None and len(ids) > IN_BATCH:
            found = [
                record
                for start in range(0, len(ids), IN_BATCH)
                for record in self.list(
                    view,
                    scopes=scopes,
                    statuses=statuses,
                    text=text,
                    all_sessions=all_sessions,
                    newest=newest,
                    ids=ids[start : start + IN_BATCH],
                )
            ]
            if newest is not None:
                found = sorted(found, key=lambda r: (r.updated_at, r.id), reverse=True)[:newest]
            return sorted(found, key=lambda r: (r.created_at, r.id))
        owners: list[tuple[str, str]] = [(MemoryScope.WORKSPACE.value, view.workspace_id)]
        if view.include_user:
            owners.append((MemoryScope.USER.value, USER_OWNER))
        if view.session_id:
            owners.append((MemoryScope.SESSION.value, view.session_id))
        clauses = ["(" + " OR ".join("(scope = ? AND owner = ?)" for _ in owners)]
        params: list[object] = [v for pair in owners for v in pair]
        if all_sessions:
            clauses[0] += " OR (scope = 'session' AND workspace_id = ?)"
            params.append(view.workspace_id)
        clauses[0] += ")"
        if ids is not None:
            # Read by id: a CASE keeps SQLite's planner off the owner index (an OR of owners
            # made it walk every memory of the user: 120 ms at 200,000 against 0.4 ms by id).
            clauses[0] = f"(CASE WHEN {clauses[0]} THEN 1 ELSE 0 END) = 1"
        if scopes:
            clauses.append(f"scope IN ({','.join('?' * len(scopes))})")
            params.extend(s.value for s in scopes)
        if statuses:
            clauses.append(f"status IN ({','.join('?' * len(statuses))})")
            params.extend(s.value for s in statuses)
        if not statuses or MemoryStatus.ACCEPTED in statuses:
            clauses.append(f"NOT ({SUPERSEDED})")
        if text:
            clauses.append("(instr(lower(body), lower(?)) > 0 OR instr(lower(key), lower(?)) > 0)")
            params.extend([text, text])
        if ids is not None:
            if not ids:
                return []
            clauses.append(f"m.id IN ({','.join('?' * len(ids))})")
            params.extend(ids)
        order = " ORDER BY m.created_at, m.id"
        if newest is not None:
            order = " ORDER BY m.updated_at DESC, m.id DESC LIMIT ?"
            params.append(newest)
        rows = self.db.query(
            SELECT_WITH_REPLACES + " WHERE " + " AND ".join(clauses) + order, params
        )
        records = [record_of(r) for r in rows]
        if newest is not None:
            records.sort(key=lambda r: (r.created_at, r.id))
        return records

    def for_context(self, view: MemoryView) -> builtins.list[MemoryRecord]:
        """The accepted memories a model may see from ``view``: the ``CONTEXT_MEMORIES`` most
        recently updated. A turn's work (counting, ranking, tracing) stays bounded however many
        memories a home holds; the memory block holds far fewer than that anyway."""
        owners = [(MemoryScope.WORKSPACE.value, view.workspace_id)]
        if view.include_user:
            owners.append((MemoryScope.USER.value, USER_OWNER))
        if view.session_id:
            owners.append((MemoryScope.SESSION.value, view.session_id))
        # One owner a statement, each read newest first along ``memories_newest`` (an OR of
        # owners sorted every accepted memory of the user: 1.8 s at 200,000 under load).
        found = [
            record_of(row)
            for scope, owner in owners
            for row in self.db.query(
                SELECT_WITH_REPLACES + " WHERE m.scope = ? AND m.owner = ? AND m.status = ?"
                " ORDER BY m.updated_at DESC, m.id DESC LIMIT ?",
                (scope, owner, MemoryStatus.ACCEPTED.value, CONTEXT_MEMORIES),
            )
        ]
        newest = sorted(found, key=lambda r: (r.updated_at, r.id), reverse=True)
        return sorted(newest[:CONTEXT_MEMORIES], key=lambda r: (r.created_at, r.id))

    def count_proposals(self, session_id: str, turn: int) -> int:
        return self.events.count(
            session_id=session_id, types=["MemoryProposed"], where_json=("turn", turn)
        )
