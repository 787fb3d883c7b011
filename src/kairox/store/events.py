"""The append-only event log: the ``EventStore`` protocol, its shared SQL and the SQLite backend.

Every query on the events table lives behind ``EventStore`` (history pages, replay look-ups,
compaction's read-backs). ``SqlEventStore`` holds the SQL both backends run; ``SqliteEventStore``
and ``kairox.store.postgres.events.PostgresEventStore`` fill in the few dialect hooks.

Token counts are cached per tokenizer in ``event_tokens``: the count for the session's tokenizer is
stored at append time, and other tokenizers' counts are filled in lazily, once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from kairox.core.clock import Clock, isoformat, parse_iso
from kairox.core.events import (
    SCHEMA_VERSION,
    EventPayload,
    StoredEvent,
    payload_from_json,
    payload_to_json,
)
from kairox.store.db import Database
from kairox.store.hub import DEFAULT_POLL_S, EventHub, Subscription
from kairox.store.sql import SqlConnection, SqlDatabase, SqlRow


class TextCounter(Protocol):
    """The part of a tokenizer the store needs: a stable name and a count."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


# A payload field and the value it must equal, e.g. ("turn", 3).
FieldMatch = tuple[str, object]


class NewEvent(NamedTuple):
    """One event for ``append_many``: the payload and where it belongs."""

    payload: EventPayload
    session_id: str | None
    workspace_id: str | None


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One event of a history page: its payload still as JSON (parsed only as far as needed)
    and its cached counts under the plain and the chat counter, when known."""

    seq: int
    ts: datetime
    payload_json: str
    tokens: int | None
    chat_tokens: int | None


class SqlEventStore:
    """``EventStore`` on a ``SqlDatabase``: the SQL both backends share. Appends join an
    enclosing ``atomic()``.

    Backends differ in a few hooks: ``_insert`` (one row, returning its seq) and ``_draw_seqs``
    (the next seqs for ``append_many``), which take whatever lock keeps seqs in commit order;
    ``_one_of`` (a column within a list) and ``_payload_equals`` (a payload field's value);
    ``_BATCH`` (seqs per ``token_counts`` query); ``pushes_changes`` and ``wait_for_append``.
    """

    _BATCH = 500  # within SQLite's default limit on bound parameters

    def __init__(
        self, db: SqlDatabase, clock: Clock, default_counter: TextCounter | None = None
    ) -> None:
        self.db = db
        self.clock = clock
        self.default_counter = default_counter
        wait = self.wait_for_append if self.pushes_changes else None
        self.hub = EventHub(self.read, self.last_seq, wait)

    # -- dialect hooks ----------------------------------------------------------------------

    def _insert(
        self, conn: SqlConnection, row: Sequence[object], token: tuple[str, int] | None
    ) -> int:
        """Insert ``row`` (ts, session_id, workspace_id, type, schema_version, payload) and its
        token count ``token`` (tokenizer, tokens) when given; its seq."""
        raise NotImplementedError

    def _draw_seqs(self, conn: SqlConnection, n: int) -> list[int]:
        """The next ``n`` seqs, ascending, held for this transaction."""
        raise NotImplementedError

    def _payload_equals(self, field: str, value: object) -> tuple[str, list[object]]:
        """SQL (and its parameters) for "the payload's ``field`` equals ``value``"."""
        raise NotImplementedError

    def _one_of(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        """SQL (and its parameters) for "``column`` is one of ``values``"."""
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    @property
    def pushes_changes(self) -> bool:
        return False  # no change notification: followers poll ``last_seq``

    def wait_for_append(self, after: int, timeout_s: float) -> bool:
        time.sleep(timeout_s)
        return self.last_seq() > after

    # -- the log ----------------------------------------------------------------------------

    def subscribe(
        self,
        *,
        after: int | None = None,
        session_id: str | None = None,
        poll_s: float = DEFAULT_POLL_S,
    ) -> Subscription:
        """Committed events from this process (pushed at commit) and others (polled by seq, or
        woken by the database when it ``pushes_changes``)."""
        return self.hub.subscribe(after=after, session_id=session_id, poll_s=poll_s)

    def append(
        self,
        payload: EventPayload,
        *,
        session_id: str | None,
        workspace_id: str | None,
        counter: TextCounter | None = None,
    ) -> StoredEvent:
        counter = counter or self.default_counter
        text = payload.message_text()
        tokens = counter.count(text) if (counter is not None and text is not None) else None
        token = (counter.name, tokens) if (counter is not None and tokens is not None) else None
        now = self.clock.now()
        row = (
            isoformat(now),
            session_id,
            workspace_id,
            payload.type,
            SCHEMA_VERSION,
            payload_to_json(payload),
        )
        event = StoredEvent(
            seq=0,
            ts=now,
            session_id=session_id,
            workspace_id=workspace_id,
            type=payload.type,
            schema_version=SCHEMA_VERSION,
            payload=payload,
            tokens=tokens,
        )
        alone = self._append_alone(row, token)
        if alone is not None:  # committed already (one statement, outside any transaction)
            event = event.model_copy(update={"seq": alone})
            self.hub.committed(event.model_copy(update={"tokens": None}))
            return event
        with self.db.atomic() as conn:
            seq = self._insert(conn, row, token)
            event = event.model_copy(update={"seq": seq})
            # Subscribers get the event as ``read`` returns it, whichever process wrote it.
            published = event.model_copy(update={"tokens": None})
            self.db.after_commit(lambda: self.hub.committed(published))
        return event

    def _append_alone(self, row: Sequence[object], token: tuple[str, int] | None) -> int | None:
        """Append ``row`` (and its token count) as one committed statement when no transaction
        is open, returning its seq; None where the backend has no such path (the default)."""
        return None

    def append_many(
        self, events: Sequence[NewEvent], *, counter: TextCounter | None = None
    ) -> list[int]:
        if not events:
            return []
        counter = counter or self.default_counter
        ts = isoformat(self.clock.now())
        with self.db.atomic() as conn:
            seqs = self._draw_seqs(conn, len(events))
            conn.executemany(
                "INSERT INTO events(seq, ts, session_id, workspace_id, type, schema_version,"
                " payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        seq,
                        ts,
                        e.session_id,
                        e.workspace_id,
                        e.payload.type,
                        SCHEMA_VERSION,
                        payload_to_json(e.payload),
                    )
                    for seq, e in zip(seqs, events, strict=True)
                ],
            )
            tokens = token_rows(seqs, events, counter)
            if tokens:
                conn.executemany(
                    "INSERT INTO event_tokens(seq, tokenizer, tokens) VALUES (?, ?, ?)", tokens
                )
            last = stored_event(seqs[-1], ts, events[-1])
            # The hub publishes the last event and reads the ones before it back (its gap path).
            self.db.after_commit(lambda: self.hub.committed(last))
        return seqs

    def read(
        self,
        *,
        after: int = 0,
        session_id: str | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
        until: int | None = None,
        workspace_id: str | None = None,
        exclude_types: Sequence[str] = (),
        home_wide: bool = False,
    ) -> list[StoredEvent]:
        sql = ["SELECT * FROM events WHERE seq > ?"]
        params: list[object] = [after]
        if until is not None:
            sql.append("AND seq <= ?")
            params.append(until)
        if session_id is not None:
            sql.append("AND session_id = ?")
            params.append(session_id)
        if workspace_id is not None:
            sql.append(
                "AND (workspace_id = ? OR workspace_id IS NULL)"
                if home_wide
                else "AND workspace_id = ?"
            )
            params.append(workspace_id)
        if types:
            clause, values = self._one_of("type", types)
            sql.append("AND " + clause)
            params.extend(values)
        if exclude_types:
            clause, values = self._one_of("type", exclude_types)
            sql.append("AND NOT (" + clause + ")")
            params.extend(values)
        sql.append("ORDER BY seq")
        if limit is not None:
            sql.append("LIMIT ?")
            params.append(limit)
        return [_row_to_event(r) for r in self.db.query(" ".join(sql), params)]

    def get(self, seq: int) -> StoredEvent | None:
        row = self.db.query_one("SELECT * FROM events WHERE seq = ?", (seq,))
        return _row_to_event(row) if row else None

    def last_seq(self) -> int:
        row = self.db.query_one("SELECT COALESCE(MAX(seq), 0) AS s FROM events")
        return int(row["s"]) if row else 0

    def latest(
        self,
        session_id: str,
        event_type: str,
        *,
        where: FieldMatch | None = None,
        before: int | None = None,
    ) -> StoredEvent | None:
        sql = "SELECT * FROM events WHERE session_id = ? AND type = ?"
        params: list[object] = [session_id, event_type]
        if where is not None:
            clause, values = self._payload_equals(*where)
            sql += " AND " + clause
            params.extend(values)
        if before is not None:
            sql += " AND seq < ?"
            params.append(before)
        row = self.db.query_one(sql + " ORDER BY seq DESC LIMIT 1", params)
        return _row_to_event(row) if row else None

    def history_page(
        self,
        session_id: str,
        types: Sequence[str],
        *,
        counter: str,
        chat_counter: str,
        before: int | None,
        limit: int,
    ) -> list[HistoryRow]:
        clause, values = self._one_of("e.type", types)
        sql = (
            "SELECT e.seq, e.ts, e.payload, t.tokens AS tokens, c.tokens AS chat_tokens"
            " FROM events e"
            " LEFT JOIN event_tokens t ON t.seq = e.seq AND t.tokenizer = ?"
            " LEFT JOIN event_tokens c ON c.seq = e.seq AND c.tokenizer = ?"
            f" WHERE e.session_id = ? AND {clause}"
        )
        params: list[object] = [counter, chat_counter, session_id, *values]
        if before is not None:
            sql += " AND e.seq < ?"
            params.append(before)
        sql += " ORDER BY e.seq DESC LIMIT ?"
        params.append(limit)
        return [
            HistoryRow(
                seq=int(r["seq"]),
                ts=parse_iso(r["ts"]),
                payload_json=r["payload"],
                tokens=None if r["tokens"] is None else int(r["tokens"]),
                chat_tokens=None if r["chat_tokens"] is None else int(r["chat_tokens"]),
            )
            for r in self.db.query(sql, params)
        ]

    def count(
        self, *, session_id: str, types: Sequence[str], where_json: FieldMatch | None = None
    ) -> int:
        """How many events of ``types`` the session has (optionally with a payload field value)."""
        clause, values = self._one_of("type", types)
        sql = f"SELECT count(*) AS n FROM events WHERE session_id = ? AND {clause}"
        params: list[object] = [session_id, *values]
        if where_json is not None:
            field_clause, field_values = self._payload_equals(*where_json)
            sql += " AND " + field_clause
            params.extend(field_values)
        row = self.db.query_one(sql, params)
        return int(row["n"]) if row else 0

    def token_counts(self, seqs: Sequence[int], counter: TextCounter) -> dict[int, int]:
        """Counts for ``seqs`` under ``counter``; missing ones are computed once and cached."""
        found: dict[int, int] = {}
        wanted = list(dict.fromkeys(seqs))
        for batch in _batches(wanted, self._BATCH):
            clause, values = self._one_of("seq", batch)
            for row in self.db.query(
                f"SELECT seq, tokens FROM event_tokens WHERE tokenizer = ? AND {clause}",
                [counter.name, *values],
            ):
                found[int(row["seq"])] = int(row["tokens"])
        missing = [s for s in wanted if s not in found]
        if not missing:
            return found
        computed: list[tuple[int, str, int]] = []
        for batch in _batches(missing, self._BATCH):
            clause, values = self._one_of("seq", batch)
            for row in self.db.query(f"SELECT * FROM events WHERE {clause}", values):
                event = _row_to_event(row)
                text = event.payload.message_text()
                if text is None:
                    continue
                count = counter.count(text)
                found[event.seq] = count
                computed.append((event.seq, counter.name, count))
        if computed:
            with self.db.atomic() as conn:
                conn.executemany(
                    "INSERT INTO event_tokens(seq, tokenizer, tokens) VALUES (?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    computed,
                )
        return found


class SqliteEventStore(SqlEventStore):
    """``EventStore`` on the shared SQLite database; its single writer keeps seqs in order."""

    db: Database

    def __init__(self, db: Database, clock: Clock, default_counter: TextCounter | None = None):
        super().__init__(db, clock, default_counter)

    def _insert(
        self, conn: sqlite3.Connection, row: Sequence[object], token: tuple[str, int] | None
    ) -> int:
        cur = conn.execute(
            "INSERT INTO events(ts, session_id, workspace_id, type, schema_version, payload)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            row,
        )
        seq = int(cur.lastrowid or 0)
        if token is not None:
            conn.execute(
                "INSERT INTO event_tokens(seq, tokenizer, tokens) VALUES (?, ?, ?)", (seq, *token)
            )
        return seq

    def _draw_seqs(self, conn: sqlite3.Connection, n: int) -> list[int]:
        # The write lock is held, so the next seqs are ours: AUTOINCREMENT's counter, plus one.
        row = conn.execute(
            "SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0),"
            " COALESCE((SELECT max(seq) FROM events), 0)) AS last"
        ).fetchone()
        first = int(row["last"]) + 1
        return list(range(first, first + n))

    def _payload_equals(self, field: str, value: object) -> tuple[str, list[object]]:
        return "json_extract(payload, ?) = ?", [f"$.{field}", value]


def token_rows(
    seqs: Sequence[int], events: Sequence[NewEvent], counter: TextCounter | None
) -> list[tuple[int, str, int]]:
    """``event_tokens`` rows for the events that carry conversation text."""
    if counter is None:
        return []
    rows = []
    for seq, event in zip(seqs, events, strict=True):
        text = event.payload.message_text()
        if text is not None:
            rows.append((seq, counter.name, counter.count(text)))
    return rows


def stored_event(seq: int, ts: str, event: NewEvent) -> StoredEvent:
    """``event`` as ``read`` returns it once committed as ``seq``."""
    return StoredEvent(
        seq=seq,
        ts=parse_iso(ts),
        session_id=event.session_id,
        workspace_id=event.workspace_id,
        type=event.payload.type,
        schema_version=SCHEMA_VERSION,
        payload=event.payload,
    )


def _batches(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _row_to_event(row: SqlRow) -> StoredEvent:
    return StoredEvent(
        seq=int(row["seq"]),
        ts=parse_iso(row["ts"]),
        session_id=row["session_id"],
        workspace_id=row["workspace_id"],
        type=row["type"],
        schema_version=int(row["schema_version"]),
        payload=payload_from_json(row["payload"]),
    )
