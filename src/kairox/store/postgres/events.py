"""``EventStore`` on Postgres: the append-only log, shared by many processes and machines.

Appends take a transaction-scoped advisory lock before drawing their ``seq``, so seqs commit in
order and a follower reading "everything after N" can never skip an event that commits late. Each
committed event is announced by a trigger (``NOTIFY kairox_events``); ``wait_for_append`` wakes on
it through one ``LISTEN`` connection per process, so followers need not poll.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from kairox.core.clock import Clock, isoformat, parse_iso
from kairox.core.events import (
    SCHEMA_VERSION,
    EventPayload,
    StoredEvent,
    payload_from_json,
    payload_to_json,
)
from kairox.store.events import (
    FieldMatch,
    HistoryRow,
    NewEvent,
    TextCounter,
    stored_event,
    token_rows,
)
from kairox.store.hub import DEFAULT_POLL_S, EventHub, Subscription
from kairox.store.postgres.db import LOCK_APPEND, PgDatabase
from kairox.store.postgres.schema import EVENTS_CHANNEL

_BATCH = 1000


class PostgresEventStore:
    """``EventStore`` on a ``PgDatabase``. Appends join an enclosing ``atomic()``."""

    def __init__(self, db: PgDatabase, clock: Clock, default_counter: TextCounter | None = None):
        self.db = db
        self.clock = clock
        self.default_counter = default_counter
        self._listener: _Listener | None = None
        self._listener_lock = threading.Lock()
        self.hub = EventHub(self.read, self.last_seq, self.wait_for_append)

    def subscribe(
        self,
        *,
        after: int | None = None,
        session_id: str | None = None,
        poll_s: float = DEFAULT_POLL_S,
    ) -> Subscription:
        """Committed events from this process (pushed at commit) and others (woken by NOTIFY)."""
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
        now = self.clock.now()
        with self.db.atomic() as conn:
            # The lock is held until commit: seq order is commit order, so a reader never skips
            # an event that commits late. Lock and insert are one round trip.
            row = conn.execute(
                "WITH lock AS (SELECT pg_advisory_xact_lock(?, 0))"
                " INSERT INTO events(ts, session_id, workspace_id, type, schema_version, payload)"
                " SELECT ?, ?, ?, ?, ?, ? FROM lock RETURNING seq",
                (
                    LOCK_APPEND,
                    isoformat(now),
                    session_id,
                    workspace_id,
                    payload.type,
                    SCHEMA_VERSION,
                    payload_to_json(payload),
                ),
            ).fetchone()
            assert row is not None  # INSERT ... RETURNING yields the row
            seq = int(row["seq"])
            if tokens is not None and counter is not None:
                conn.execute(
                    "INSERT INTO event_tokens(seq, tokenizer, tokens) VALUES (?, ?, ?)",
                    (seq, counter.name, tokens),
                )
            event = StoredEvent(
                seq=seq,
                ts=now,
                session_id=session_id,
                workspace_id=workspace_id,
                type=payload.type,
                schema_version=SCHEMA_VERSION,
                payload=payload,
                tokens=tokens,
            )
            # Subscribers get the event as ``read`` returns it, whichever process wrote it.
            published = event.model_copy(update={"tokens": None})
            self.db.after_commit(lambda: self.hub.committed(published))
        return event

    def append_many(
        self, events: Sequence[NewEvent], *, counter: TextCounter | None = None
    ) -> list[int]:
        if not events:
            return []
        counter = counter or self.default_counter
        ts = isoformat(self.clock.now())
        with self.db.atomic() as conn:
            # As in ``append``: the lock is held to commit, so the seqs drawn here commit in order.
            conn.execute("SELECT pg_advisory_xact_lock(?, 0)", (LOCK_APPEND,))
            drawn = conn.execute(
                "SELECT nextval(pg_get_serial_sequence('events', 'seq')) AS seq"
                " FROM generate_series(1, ?)",
                (len(events),),
            ).fetchall()
            seqs = sorted(int(r["seq"]) for r in drawn)
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
    ) -> list[StoredEvent]:
        sql = ["SELECT * FROM events WHERE seq > ?"]
        params: list[object] = [after]
        if until is not None:
            sql.append("AND seq <= ?")
            params.append(until)
        if session_id is not None:
            sql.append("AND session_id = ?")
            params.append(session_id)
        if types:
            sql.append("AND type = ANY(?)")
            params.append(list(types))
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
            sql += " AND (payload::jsonb -> ?) = ?::jsonb"
            params.extend([where[0], json.dumps(where[1])])
        if before is not None:
            sql += " AND seq < ?"
            params.append(before)
        row = self.db.query_one(sql + " ORDER BY seq DESC LIMIT 1", params)
        return _row_to_event(row) if row else None

    def count(
        self, *, session_id: str, types: Sequence[str], where_json: FieldMatch | None = None
    ) -> int:
        sql = "SELECT count(*) AS n FROM events WHERE session_id = ? AND type = ANY(?)"
        params: list[object] = [session_id, list(types)]
        if where_json is not None:
            sql += " AND (payload::jsonb -> ?) = ?::jsonb"
            params.extend([where_json[0], json.dumps(where_json[1])])
        row = self.db.query_one(sql, params)
        return int(row["n"]) if row else 0

    def token_counts(self, seqs: Sequence[int], counter: TextCounter) -> dict[int, int]:
        """Counts for ``seqs`` under ``counter``; missing ones are computed once and cached."""
        found: dict[int, int] = {}
        wanted = list(dict.fromkeys(seqs))
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            for row in self.db.query(
                "SELECT seq, tokens FROM event_tokens WHERE tokenizer = ? AND seq = ANY(?)",
                (counter.name, batch),
            ):
                found[int(row["seq"])] = int(row["tokens"])
        missing = [s for s in wanted if s not in found]
        computed: list[tuple[int, str, int]] = []
        for start in range(0, len(missing), _BATCH):
            rows = self.db.query(
                "SELECT * FROM events WHERE seq = ANY(?)", (missing[start : start + _BATCH],)
            )
            for row in rows:
                event = _row_to_event(row)
                text = event.payload.message_text()
                if text is None:
                    continue
                count = counter.count(text)
                found[event.seq] = count
                computed.append((event.seq, counter.name, count))
        if computed:
            with self.db.atomic() as conn:
                conn.raw.cursor().executemany(
                    "INSERT INTO event_tokens(seq, tokenizer, tokens) VALUES (%s, %s, %s)"
                    " ON CONFLICT DO NOTHING",
                    computed,
                )
        return found

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
        sql = (
            "SELECT e.seq, e.ts, e.payload, t.tokens AS tokens, c.tokens AS chat_tokens"
            " FROM events e"
            " LEFT JOIN event_tokens t ON t.seq = e.seq AND t.tokenizer = ?"
            " LEFT JOIN event_tokens c ON c.seq = e.seq AND c.tokenizer = ?"
            " WHERE e.session_id = ? AND e.type = ANY(?)"
        )
        params: list[object] = [counter, chat_counter, session_id, list(types)]
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
                tokens=r["tokens"],
                chat_tokens=r["chat_tokens"],
            )
            for r in self.db.query(sql, params)
        ]

    @property
    def pushes_changes(self) -> bool:
        return True

    def wait_for_append(self, after: int, timeout_s: float) -> bool:
        """Block until a NOTIFY says an event past ``after`` committed, or ``timeout_s`` passes."""
        with self._listener_lock:
            if self._listener is None:
                self._listener = _Listener(self.db.url, self.last_seq)
            listener = self._listener
        return listener.wait_past(after, timeout_s)

    def close(self) -> None:
        with self._listener_lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()


class _Listener:
    """One ``LISTEN kairox_events`` connection per process; tracks the highest announced seq."""

    def __init__(self, url: str, last_seq: Any) -> None:
        self._url = url
        self._last_seq = last_seq
        self._cond = threading.Condition()
        self._seen = -1
        self._stopped = False
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kairox-listen", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def wait_past(self, after: int, timeout_s: float) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._seen > after or self._stopped, timeout_s)
            return self._seen > after

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopped:
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    # Whatever committed before LISTEN took effect is covered by the log's max.
                    self._announce(int(self._last_seq()))
                    self._ready.set()
                    while not self._stopped:
                        for note in conn.notifies(timeout=0.5):
                            self._announce(int(note.payload))
            except psycopg.Error:
                self._ready.set()
                time.sleep(0.5)  # the server went away: reconnect, then catch up from the max

    def _announce(self, seq: int) -> None:
        with self._cond:
            if seq > self._seen:
                self._seen = seq
                self._cond.notify_all()


def _row_to_event(row: dict[str, Any]) -> StoredEvent:
    return StoredEvent(
        seq=int(row["seq"]),
        ts=parse_iso(row["ts"]),
        session_id=row["session_id"],
        workspace_id=row["workspace_id"],
        type=row["type"],
        schema_version=int(row["schema_version"]),
        payload=payload_from_json(row["payload"]),
    )
