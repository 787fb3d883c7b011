"""The SQL ``MemoryStore`` (SQLite, and Postgres by subclass): memory rows project memory events.

Each change appends its event and updates ``memories`` and ``memory_versions`` inside one
transaction, so the log and the projection can never diverge. Decisions re-read the row inside the
write transaction, which makes them idempotent across processes.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import cast

from kairox.core.clock import Clock, isoformat
from kairox.core.errors import InvalidInput, MemoryDecisionError
from kairox.core.events import (
    MemoryAccepted,
    MemoryDeleted,
    MemoryEdited,
    MemoryProposed,
    MemoryRejected,
    MemoryRestored,
    UntrustedInput,
)
from kairox.core.ids import new_id
from kairox.core.records import (
    ImportedMemory,
    MemoryImport,
    MemoryRecord,
    owner_of,
)
from kairox.core.types import Actor, MemoryOrigin, MemoryScope, MemoryStatus
from kairox.store.memory_forget import accept_forget
from kairox.store.memory_import import import_many
from kairox.store.memory_reads import CONTEXT_MEMORIES as CONTEXT_MEMORIES  # public here too
from kairox.store.memory_reads import UNDOABLE, MemoryReads
from kairox.store.memory_rows import (
    identical_row,
    insert_version,
    live_row,
    pending_forget,
)
from kairox.store.protocols import EventStore
from kairox.store.sql import SqlConnection, SqlDatabase, SqlRow

# (scope, owner, key): what a key lock covers.
MemoryKey = tuple[MemoryScope, str, str | None]


class SqlMemoryStore(MemoryReads):
    """``MemoryStore`` over the home database, sharing it (and its transactions) with the log.

    Backends differ in two hooks: ``_LOCK_ROW`` (Postgres locks the row a decision reads, so two
    processes deciding at once serialise; SQLite's write transaction already does) and
    ``_lock_keys`` (Postgres serialises changes to one (scope, owner, key)).
    """

    def __init__(self, db: SqlDatabase, events: EventStore, clock: Clock) -> None:
        self.db = db
        self.events = events
        self.clock = clock

    def _lock_keys(self, conn: SqlConnection, keys: Sequence[MemoryKey]) -> None:
        """Serialise writers of these keys (a no-op where transactions already serialise)."""

    def _lock_key(
        self, conn: SqlConnection, scope: MemoryScope, owner: str, key: str | None
    ) -> None:
        self._lock_keys(conn, [(scope, owner, key)])

    # -- writes ---------------------------------------------------------------------------

    def atomic(self) -> AbstractContextManager[SqlConnection]:
        return self.db.atomic()

    def propose(
        self,
        scope: MemoryScope,
        key: str | None,
        body: str,
        *,
        workspace_id: str | None,
        session_id: str | None,
        turn: int | None = None,
        untrusted_inputs: Sequence[UntrustedInput] = (),
        forget: bool = False,
        origin: MemoryOrigin | None = None,
    ) -> MemoryRecord:
        """A pending proposal; with ``forget``, a proposal to delete the key's accepted memory
        (its body is that memory's; ``body`` is ignored)."""
        body = body.strip()
        if not body and not forget:
            raise InvalidInput("a memory body cannot be empty")
        if scope is not MemoryScope.SESSION and not key:
            raise InvalidInput(f"{scope.value} memory needs a key")
        if scope is MemoryScope.USER:
            owner_ws, owner_session = None, None
        elif scope is MemoryScope.WORKSPACE:
            owner_ws, owner_session = workspace_id, None
        else:
            owner_ws, owner_session = workspace_id, session_id
        owner = owner_of(scope, workspace_id=owner_ws, session_id=owner_session)
        memory_id = new_id("mem")
        now = isoformat(self.clock.now())
        with self.db.atomic() as conn:
            current = self._live(conn, scope, owner, key)  # locks the key: two identical
            if forget:
                if current is None or key is None:
                    raise InvalidInput(f"no accepted {scope.value} memory '{key}' to delete")
                body = current["body"]
                same = pending_forget(conn, scope, owner, key)
            else:
                same = identical_row(conn, scope, owner, key, body)  # proposals make one row
            if same is not None:  # an identical re-proposal is a no-op
                return self.get(str(same["id"]))
            event = self._append(
                MemoryProposed(
                    memory_id=memory_id,
                    scope=scope,
                    key=key,
                    body=body,
                    turn=turn,
                    replaces_body=current["body"] if current else None,
                    untrusted_inputs=tuple(untrusted_inputs),
                    forget=forget,
                    origin=origin,
                ),
                session_id=session_id,
                workspace_id=workspace_id,
            )
            conn.execute(
                "INSERT INTO memories(id, scope, owner, workspace_id, session_id, key, body,"
                " status, version, created_at, updated_at, proposed_session_id, proposed_turn,"
                " untrusted_inputs, proposed_seq, forget)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?, ?)",
                (
                    memory_id,
                    scope.value,
                    owner,
                    owner_ws,
                    owner_session,
                    key,
                    body,
                    now,
                    now,
                    session_id,
                    turn,
                    json.dumps([u.model_dump(mode="json") for u in untrusted_inputs]),
                    event,
                    int(forget),
                ),
            )
            insert_version(  # a proposal is no version yet: its first acceptance makes v1
                conn, memory_id, 0, "propose", body, MemoryStatus.PENDING, Actor.MODEL, event, now
            )
        return self.get(memory_id)

    def import_many(
        self,
        entries: Sequence[MemoryImport],
        *,
        workspace_id: str,
        actor: Actor,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[ImportedMemory]:
        """``propose`` then ``accept`` (or leave pending) for each entry, in order and in one
        transaction, written in batches (``kairox.store.memory_import``)."""
        return import_many(self, entries, workspace_id=workspace_id, actor=actor, progress=progress)

    def accept(self, memory_id: str, *, actor: Actor, body: str | None = None) -> MemoryRecord:
        """Accept a pending proposal (optionally with an edited body). Accepting twice is a no-op.

        If an accepted memory already holds the same (scope, owner, key), it takes the new body
        and the proposal is folded into it, so a key never has two rows.
        """
        if body is not None and not body.strip():
            raise InvalidInput("a memory body cannot be empty")
        with self.db.atomic() as conn:
            row = self._row(conn, memory_id, lock=True)
            status = MemoryStatus(row["status"])
            if status is MemoryStatus.ACCEPTED:
                return self.get(row["id"])
            if status is not MemoryStatus.PENDING:
                raise MemoryDecisionError(row["id"], status.value, "approve")
            if row["forget"]:
                return accept_forget(self, conn, row, actor)
            now = isoformat(self.clock.now())
            scope = MemoryScope(row["scope"])
            new_body = body.strip() if body is not None else row["body"]
            existing = self._live(conn, scope, row["owner"], row["key"])
            target = existing if existing is not None else row
            version = int(target["version"]) + 1
            approved_at = None if scope is MemoryScope.SESSION else now
            # The accepted body lands on the key's live row, carrying the proposal's provenance.
            # (Projection first, event last: on Postgres the append's lock is held to commit.)
            conn.execute(
                "UPDATE memories SET status = 'accepted', body = ?, version = ?, updated_at = ?,"
                " approved_at = ?, decided_by = ?, proposed_session_id = ?, proposed_turn = ?,"
                " untrusted_inputs = ? WHERE id = ?",
                (
                    new_body,
                    version,
                    now,
                    approved_at,
                    actor.value,
                    row["proposed_session_id"],
                    row["proposed_turn"],
                    row["untrusted_inputs"],
                    target["id"],
                ),
            )
            event = self._append(
                MemoryAccepted(
                    memory_id=row["id"],
                    scope=scope,
                    key=row["key"],
                    body=new_body,
                    version=version,
                    decided_by=actor,
                    replaced_memory_id=existing["id"] if existing is not None else None,
                ),
                session_id=row["proposed_session_id"],
                workspace_id=self._decided_in(conn, row),
            )
            insert_version(
                conn,
                target["id"],
                version,
                "replace" if existing is not None else "accept",
                new_body,
                MemoryStatus.ACCEPTED,
                actor,
                event,
                now,
                source=row["id"] if existing is not None else None,
            )
            if existing is not None:
                # The proposal folds into the key's row: one row per key, its id still resolves.
                conn.execute("DELETE FROM memories WHERE id = ?", (row["id"],))
                conn.execute(
                    "INSERT INTO memory_redirects(from_id, to_id) VALUES (?, ?)",
                    (row["id"], existing["id"]),
                )
            resolved = str(target["id"])
        return self.get(resolved)

    def reject(
        self, memory_id: str, *, actor: Actor, reason: str = "rejected by the user"
    ) -> MemoryRecord:
        with self.db.atomic() as conn:
            row = self._row(conn, memory_id, lock=True)
            status = MemoryStatus(row["status"])
            if status is MemoryStatus.REJECTED:
                return self.get(row["id"])
            if status is not MemoryStatus.PENDING:
                raise MemoryDecisionError(row["id"], status.value, "reject")
            now = isoformat(self.clock.now())
            version = int(row["version"]) + 1
            conn.execute(
                "UPDATE memories SET status = 'rejected', version = ?, updated_at = ?,"
                " decided_by = ?, decision_reason = ? WHERE id = ?",
                (version, now, actor.value, reason, row["id"]),
            )
            event = self._append(
                MemoryRejected(
                    memory_id=row["id"],
                    scope=MemoryScope(row["scope"]),
                    key=row["key"],
                    reason=reason,
                    decided_by=actor,
                ),
                session_id=row["proposed_session_id"],
                workspace_id=self._decided_in(conn, row),
            )
            insert_version(
                conn,
                row["id"],
                version,
                "reject",
                row["body"],
                MemoryStatus.REJECTED,
                actor,
                event,
                now,
            )
        return self.get(row["id"])

    def edit(
        self,
        memory_id: str,
        body: str,
        *,
        actor: Actor,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> MemoryRecord:
        body = body.strip()
        if not body:
            raise InvalidInput("a memory body cannot be empty; use 'delete' to remove a memory")
        with self.db.atomic() as conn:
            row = self._row(conn, memory_id, lock=True)
            status = MemoryStatus(row["status"])
            if status in (MemoryStatus.REJECTED, MemoryStatus.DELETED):
                raise MemoryDecisionError(row["id"], status.value, "edit")
            if body == row["body"] and not untrusted:
                return self.get(row["id"])
            self._set_body(conn, row, body, actor, action="edit", undo=False, untrusted=untrusted)
        return self.get(row["id"])

    def delete(self, memory_id: str, *, actor: Actor) -> MemoryRecord:
        with self.db.atomic() as conn:
            row = self._row(conn, memory_id, lock=True)
            if row["status"] == MemoryStatus.DELETED.value:
                return self.get(row["id"])
            now = isoformat(self.clock.now())
            version = int(row["version"]) + 1
            event = self._append(
                MemoryDeleted(memory_id=row["id"], version=version, decided_by=actor),
                session_id=row["session_id"],
                workspace_id=row["workspace_id"],
            )
            conn.execute(
                "UPDATE memories SET status = 'deleted', version = ?, updated_at = ? WHERE id = ?",
                (version, now, row["id"]),
            )
            insert_version(
                conn,
                row["id"],
                version,
                "delete",
                row["body"],
                MemoryStatus.DELETED,
                actor,
                event,
                now,
            )
        return self.get(row["id"])

    def discard_session(self, session_id: str) -> builtins.list[str]:
        """Delete the live session memories of ``session_id`` (its archive): a
        ``MemoryDeleted`` each, decided by the policy. Returns their ids."""
        with self.db.atomic() as conn:
            rows = conn.execute(
                "SELECT id FROM memories WHERE scope = 'session' AND owner = ?"
                " AND status IN ('pending', 'accepted') ORDER BY created_at, id",
                (session_id,),
            ).fetchall()
            ids = [str(r["id"]) for r in rows]
            for memory_id in ids:
                self.delete(memory_id, actor=Actor.POLICY)
        return ids

    def undo(self, memory_id: str, *, actor: Actor) -> MemoryRecord:
        """Revert the latest edit, replacement or delete that is not undone yet."""
        with self.db.atomic() as conn:
            row = self._row(conn, memory_id, lock=True)
            versions = conn.execute(
                "SELECT * FROM memory_versions WHERE memory_id = ? ORDER BY version",
                (row["id"],),
            ).fetchall()
            target = next(
                (v for v in reversed(versions) if v["action"] in UNDOABLE and not v["undone"]),
                None,
            )
            if target is None:
                raise InvalidInput(f"memory {row['id']} has no edit or delete to undo")
            before = max(
                (v for v in versions if v["version"] < target["version"]),
                key=lambda v: v["version"],
            )
            conn.execute(
                "UPDATE memory_versions SET undone = 1 WHERE memory_id = ? AND version = ?",
                (row["id"], target["version"]),
            )
            if target["action"] == "delete":
                status = MemoryStatus(before["status"])
                if (
                    status is MemoryStatus.ACCEPTED
                    and self._live(conn, MemoryScope(row["scope"]), row["owner"], row["key"])
                    is not None
                ):
                    raise MemoryDecisionError(row["id"], "replaced by a newer memory", "restore")
                now = isoformat(self.clock.now())
                version = int(row["version"]) + 1
                event = self._append(
                    MemoryRestored(memory_id=row["id"], version=version, decided_by=actor),
                    session_id=row["session_id"],
                    workspace_id=row["workspace_id"],
                )
                conn.execute(
                    "UPDATE memories SET status = ?, version = ?, updated_at = ? WHERE id = ?",
                    (status.value, version, now, row["id"]),
                )
                insert_version(
                    conn, row["id"], version, "restore", row["body"], status, actor, event, now
                )
            else:
                self._set_body(conn, row, before["body"], actor, action="undo", undo=True)
        return self.get(row["id"])

    def _set_body(
        self,
        conn: SqlConnection,
        row: SqlRow,
        body: str,
        actor: Actor,
        *,
        action: str,
        undo: bool,
        untrusted: Sequence[UntrustedInput] = (),
    ) -> None:
        now = isoformat(self.clock.now())
        version = int(row["version"]) + 1
        had = [UntrustedInput.model_validate(u) for u in json.loads(row["untrusted_inputs"])]
        added = tuple(u for u in dict.fromkeys(untrusted) if u not in had)
        event = self._append(
            MemoryEdited(
                memory_id=row["id"],
                body=body,
                previous_body=row["body"],
                version=version,
                decided_by=actor,
                undo=undo,
                untrusted_inputs=added,
            ),
            session_id=row["session_id"],
            workspace_id=row["workspace_id"],
        )
        taint = json.dumps([u.model_dump(mode="json") for u in (*had, *added)])
        conn.execute(
            "UPDATE memories SET body = ?, version = ?, updated_at = ?, untrusted_inputs = ?"
            " WHERE id = ?",
            (body, version, now, taint, row["id"]),
        )
        insert_version(
            conn, row["id"], version, action, body, MemoryStatus(row["status"]), actor, event, now
        )

    @staticmethod
    def _decided_in(conn: SqlConnection, row: SqlRow) -> str | None:
        """The workspace a decision on a proposal belongs to: the memory's own, else (a user
        memory) the workspace of the session that proposed it."""
        if row["workspace_id"] is not None or row["proposed_session_id"] is None:
            return cast("str | None", row["workspace_id"])
        found: SqlRow | None = conn.execute(
            "SELECT workspace_id FROM sessions WHERE id = ?", (row["proposed_session_id"],)
        ).fetchone()
        return None if found is None else str(found["workspace_id"])

    def _live(self, conn: SqlConnection, scope: MemoryScope, owner: str, key: str | None) -> SqlRow:
        """The key's accepted row, locked (with the key) for the rest of the transaction."""
        self._lock_key(conn, scope, owner, key)
        return live_row(conn, scope, owner, key, suffix=self._LOCK_ROW)


class SqliteMemoryStore(SqlMemoryStore):
    """``MemoryStore`` on the SQLite home database (``BEGIN IMMEDIATE`` serialises writers)."""
