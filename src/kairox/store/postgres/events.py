"""``EventStore`` on Postgres: the append-only log, shared by many processes and machines.

Appends take a transaction-scoped advisory lock before drawing their ``seq``, so seqs commit in
order and a follower reading "everything after N" can never skip an event that commits late. Each
committed event is announced by a trigger (``NOTIFY kairox_events``); ``wait_for_append`` wakes on
it through one ``LISTEN`` connection per process, so followers need not poll. The rest of the
SQL is ``kairox.store.events.SqlEventStore``'s; this class fills in its dialect hooks.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from kairox.core.clock import Clock
from kairox.store.events import SqlEventStore, TextCounter
from kairox.store.postgres.db import LOCK_APPEND, PgConnection, PgDatabase
from kairox.store.postgres.schema import EVENTS_CHANNEL


class PostgresEventStore(SqlEventStore):
    """``EventStore`` on a ``PgDatabase``. Appends join an enclosing ``atomic()``."""

    _BATCH = 1000
    db: PgDatabase

    def __init__(self, db: PgDatabase, clock: Clock, default_counter: TextCounter | None = None):
        self._listener: _Listener | None = None
        self._listener_lock = threading.Lock()
        super().__init__(db, clock, default_counter)

    def _insert(
        self, conn: PgConnection, row: Sequence[object], token: tuple[str, int] | None
    ) -> int:
        # The lock is held until commit: seq order is commit order, so a reader never skips
        # an event that commits late. Lock, insert and token count are one round trip.
        inserted = conn.execute(
            "WITH lock AS (SELECT pg_advisory_xact_lock(?, 0)),"
            " ev AS (INSERT INTO events(ts, session_id, workspace_id, type, schema_version,"
            " payload) SELECT ?, ?, ?, ?, ?, ? FROM lock RETURNING seq),"
            " tok AS (INSERT INTO event_tokens(seq, tokenizer, tokens)"
            " SELECT seq, ?, ? FROM ev WHERE ?)"
            " SELECT seq FROM ev",
            (LOCK_APPEND, *row, *(token or ("", 0)), token is not None),
        ).fetchone()
        assert inserted is not None  # INSERT ... RETURNING yields the row
        return int(inserted["seq"])

    def _append_alone(self, row: Sequence[object], token: tuple[str, int] | None) -> int | None:
        # Outside a transaction the pooled connection autocommits, so ``_insert`` and the commit
        # are one round trip and the lock is never held across a client's pause: the one thing
        # that made many writers queue behind one another.
        if self.db.in_transaction():
            return None
        with self.db.read() as conn:
            return self._insert(conn, row, token)

    def _draw_seqs(self, conn: PgConnection, n: int) -> list[int]:
        # As in ``_insert``: the lock is held to commit, so the seqs drawn here commit in order.
        conn.execute("SELECT pg_advisory_xact_lock(?, 0)", (LOCK_APPEND,))
        drawn = conn.execute(
            "SELECT nextval(pg_get_serial_sequence('events', 'seq')) AS seq"
            " FROM generate_series(1, ?)",
            (n,),
        ).fetchall()
        return sorted(int(r["seq"]) for r in drawn)

    def _payload_equals(self, field: str, value: object) -> tuple[str, list[object]]:
        return "(payload::jsonb -> ?) = ?::jsonb", [field, json.dumps(value)]

    def _one_of(self, column: str, values: Sequence[object]) -> tuple[str, list[object]]:
        return f"{column} = ANY(?)", [list(values)]

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
