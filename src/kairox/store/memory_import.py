"""``import_many`` for the SQL memory store: many proposals (and acceptances) in batches.

The effect is what ``propose`` and then ``accept`` do entry by entry, in order: the same events
(``MemoryProposed``, then ``MemoryAccepted`` unless the entry stays pending), the same memory rows
and version rows, a same-key change folded into the key's row with a redirect, an identical
re-proposal a no-op. The difference is the cost: the keys are locked and the live rows read once,
and every ``CHUNK`` entries the events, rows and versions are written with one ``executemany``
each, inside the caller's one transaction (all or nothing).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kairox.core.clock import Clock, isoformat
from kairox.core.errors import InvalidInput
from kairox.core.events import EventPayload, MemoryAccepted, MemoryProposed
from kairox.core.ids import new_id
from kairox.core.records import (
    MAX_BODY_CHARS,
    USER_OWNER,
    ImportedMemory,
    MemoryImport,
)
from kairox.core.types import Actor, MemoryScope
from kairox.store.events import NewEvent
from kairox.store.protocols import EventStore
from kairox.store.sql import SqlConnection, SqlRow

if TYPE_CHECKING:
    from kairox.store.memories import SqlMemoryStore

CHUNK = 2000
"""Entries per batch of writes (and per progress report)."""

_COLUMNS = (
    "id, scope, owner, workspace_id, key, body, status, version, created_at, updated_at,"
    " approved_at, decided_by, proposed_session_id, proposed_turn, untrusted_inputs, proposed_seq"
)


@dataclass(slots=True)
class _Row:
    """A keyed memory row as this import sees it; written back at the end of each chunk."""

    id: str
    scope: MemoryScope
    owner: str
    workspace_id: str | None
    key: str
    body: str
    status: str
    version: int
    created_at: str
    updated_at: str
    approved_at: str | None
    decided_by: str | None
    proposed_session_id: str | None
    proposed_turn: int | None
    untrusted_inputs: str
    proposed_seq: int | None
    stored: bool  # the row is in the database (read, or written by an earlier chunk)
    folded: bool = False  # accepted into its key's row: deleted, its id redirected
    event: int | None = None  # this chunk's index of its MemoryProposed, until written

    @classmethod
    def read(cls, row: SqlRow) -> _Row:
        return cls(
            **{name: row[name] for name in _COLUMNS.split(", ") if name != "scope"},
            scope=MemoryScope(row["scope"]),
            stored=True,
        )


def import_many(
    store: SqlMemoryStore,
    entries: Sequence[MemoryImport],
    *,
    workspace_id: str,
    actor: Actor,
    progress: Callable[[int, int], None] | None = None,
) -> list[ImportedMemory]:
    """Import ``entries`` (user or workspace memories) in one transaction; see the module."""
    cleaned = [_checked(i, entry) for i, entry in enumerate(entries, start=1)]
    owners = {MemoryScope.USER: USER_OWNER, MemoryScope.WORKSPACE: workspace_id}
    results: list[ImportedMemory] = []
    with store.db.atomic() as conn:
        store._lock_keys(conn, [(e.scope, owners[e.scope], e.key) for e in cleaned])
        batch = _Batch(conn, store.events, store.clock, actor, workspace_id, owners)
        batch.load(store._LOCK_ROW)
        for start in range(0, len(cleaned), CHUNK):
            results.extend(batch.add(entry) for entry in cleaned[start : start + CHUNK])
            batch.flush()
            if progress is not None:
                progress(len(results), len(cleaned))
    return results


def _checked(number: int, entry: MemoryImport) -> MemoryImport:
    """The entry with its body stripped, or a one-line error naming it."""
    where = f"import entry {number} ({entry.scope.value}: {entry.key or '-'})"
    if entry.scope is MemoryScope.SESSION:
        raise InvalidInput(f"{where}: session memories belong to one session, not an import")
    if not entry.key:
        raise InvalidInput(f"{where}: {entry.scope.value} memory needs a key")
    body = entry.body.strip()
    if not body:
        raise InvalidInput(f"{where}: a memory body cannot be empty")
    if len(body) > MAX_BODY_CHARS:
        raise InvalidInput(f"{where}: a memory body has at most {MAX_BODY_CHARS} characters")
    return entry if body == entry.body else MemoryImport(entry.scope, entry.key, body, entry.accept)


class _Batch:
    def __init__(
        self,
        conn: SqlConnection,
        events: EventStore,
        clock: Clock,
        actor: Actor,
        workspace_id: str,
        owners: dict[MemoryScope, str],
    ) -> None:
        self.conn = conn
        self.events = events
        self.clock = clock
        self.actor = actor
        self.workspace_id = workspace_id
        self.owners = owners
        self.live: dict[tuple[MemoryScope, str], _Row] = {}
        self.pending: dict[tuple[MemoryScope, str, str], _Row] = {}
        # What the current chunk writes: events, touched rows (by id), redirects, versions (whose
        # event_seq is an index into ``new_events`` until the chunk is written).
        self.new_events: list[NewEvent] = []
        self.touched: dict[str, _Row] = {}
        self.redirects: list[tuple[str, str]] = []
        self.versions: list[tuple[str, int, str, str, str, str, int, str, str | None]] = []

    def load(self, lock_suffix: str) -> None:
        """The live rows and pending proposals of the two owners, read (and locked) once."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE ((scope = 'user' AND owner = ?)"
            " OR (scope = 'workspace' AND owner = ?)) AND key IS NOT NULL"
            " AND status IN ('accepted', 'pending') ORDER BY created_at, id" + lock_suffix,
            (self.owners[MemoryScope.USER], self.owners[MemoryScope.WORKSPACE]),
        ).fetchall()
        for raw in rows:
            row = _Row.read(raw)
            if row.status == "accepted":
                self.live[(row.scope, row.key)] = row
            else:
                self.pending.setdefault((row.scope, row.key, row.body), row)

    def add(self, entry: MemoryImport) -> ImportedMemory:
        """``propose`` then (unless pending) ``accept``, in memory; ``flush`` writes it."""
        key = (entry.scope, entry.key)
        current = self.live.get(key)
        if current is not None and current.body == entry.body:
            return ImportedMemory(current.id, "unchanged")
        now = isoformat(self.clock.now())
        same = (entry.scope, entry.key, entry.body)
        proposal = self.pending.get(same)  # an identical proposal is not proposed again
        if proposal is None:
            proposal = self._propose(entry, current, now)
            if not entry.accept:
                self.pending[same] = proposal
        if not entry.accept:
            return ImportedMemory(proposal.id, "pending")
        self.pending.pop(same, None)
        self._accept(proposal, current, now)
        if current is None:
            return ImportedMemory(proposal.id, "created")
        return ImportedMemory(current.id, "replaced")

    def _propose(self, entry: MemoryImport, current: _Row | None, now: str) -> _Row:
        memory_id = new_id("mem")
        event = self._emit(
            MemoryProposed(
                memory_id=memory_id,
                scope=entry.scope,
                key=entry.key,
                body=entry.body,
                replaces_body=current.body if current is not None else None,
                untrusted_inputs=entry.untrusted_inputs,
            ),
            session_id=None,
            workspace_id=self.workspace_id,
        )
        row = _Row(
            id=memory_id,
            scope=entry.scope,
            owner=self.owners[entry.scope],
            workspace_id=self.workspace_id if entry.scope is MemoryScope.WORKSPACE else None,
            key=entry.key,
            body=entry.body,
            status="pending",
            version=0,  # a proposal is no version yet: its first acceptance makes v1
            created_at=now,
            updated_at=now,
            approved_at=None,
            decided_by=None,
            proposed_session_id=None,
            proposed_turn=None,
            untrusted_inputs=json.dumps(
                [u.model_dump(mode="json") for u in entry.untrusted_inputs]
            ),
            proposed_seq=None,
            stored=False,
            event=event,
        )
        self.touched[memory_id] = row
        self.versions.append(
            (memory_id, 0, "propose", entry.body, "pending", Actor.SYSTEM.value, event, now, None)
        )
        return row

    def _accept(self, proposal: _Row, current: _Row | None, now: str) -> None:
        target = current if current is not None else proposal
        version = target.version + 1
        event = self._emit(
            MemoryAccepted(
                memory_id=proposal.id,
                scope=proposal.scope,
                key=proposal.key,
                body=proposal.body,
                version=version,
                decided_by=self.actor,
                replaced_memory_id=current.id if current is not None else None,
            ),
            session_id=proposal.proposed_session_id,
            workspace_id=proposal.workspace_id,
        )
        # The accepted body lands on the key's live row, carrying the proposal's provenance.
        target.status = "accepted"
        target.body = proposal.body
        target.version = version
        target.updated_at = now
        target.approved_at = now
        target.decided_by = self.actor.value
        target.proposed_session_id = proposal.proposed_session_id
        target.proposed_turn = proposal.proposed_turn
        target.untrusted_inputs = proposal.untrusted_inputs
        self.touched[target.id] = target
        self.live[(target.scope, target.key)] = target
        source = None
        if current is not None:  # the proposal folds into the key's row; its id still resolves
            proposal.folded = True
            self.touched[proposal.id] = proposal
            self.redirects.append((proposal.id, current.id))
            source = proposal.id
        action = "accept" if current is None else "replace"
        self.versions.append(
            (
                target.id,
                version,
                action,
                target.body,
                "accepted",
                self.actor.value,
                event,
                now,
                source,
            )
        )

    def _emit(
        self, payload: EventPayload, *, session_id: str | None, workspace_id: str | None
    ) -> int:
        self.new_events.append(NewEvent(payload, session_id, workspace_id))
        return len(self.new_events) - 1

    def flush(self) -> None:
        """Write this chunk: its events first (the versions point at them), then the rows."""
        seqs = self.events.append_many(self.new_events)
        deletes, updates, inserts = [], [], []
        for row in self.touched.values():
            if row.event is not None:
                row.proposed_seq, row.event = seqs[row.event], None
            if row.folded:
                if row.stored:
                    deletes.append((row.id,))
            elif row.stored:
                updates.append(
                    (row.status, row.body, row.version, row.updated_at, row.approved_at,
                     row.decided_by, row.proposed_session_id, row.proposed_turn,
                     row.untrusted_inputs, row.id)
                )  # fmt: skip
            else:
                inserts.append(
                    (row.id, row.scope.value, row.owner, row.workspace_id, row.key, row.body,
                     row.status, row.version, row.created_at, row.updated_at, row.approved_at,
                     row.decided_by, row.proposed_session_id, row.proposed_turn,
                     row.untrusted_inputs, row.proposed_seq)
                )  # fmt: skip
                row.stored = True
        conn = self.conn
        if deletes:
            conn.executemany("DELETE FROM memories WHERE id = ?", deletes)
        if updates:
            conn.executemany(
                "UPDATE memories SET status = ?, body = ?, version = ?, updated_at = ?,"
                " approved_at = ?, decided_by = ?, proposed_session_id = ?, proposed_turn = ?,"
                " untrusted_inputs = ? WHERE id = ?",
                updates,
            )
        if inserts:
            conn.executemany(
                f"INSERT INTO memories({_COLUMNS}) VALUES ({', '.join('?' * 16)})", inserts
            )
        if self.redirects:
            conn.executemany(
                "INSERT INTO memory_redirects(from_id, to_id) VALUES (?, ?)", self.redirects
            )
        if self.versions:
            conn.executemany(
                "INSERT INTO memory_versions(memory_id, version, action, body, status, actor,"
                " event_seq, changed_at, source_memory_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*v[:6], seqs[v[6]], *v[7:]) for v in self.versions],
            )
        self.new_events, self.touched, self.redirects, self.versions = [], {}, [], []
