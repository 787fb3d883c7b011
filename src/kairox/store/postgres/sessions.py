"""Sessions on Postgres: the shared SQL registry, with the lease held as an advisory lock.

The lease is a session-level ``pg_try_advisory_lock`` on a connection of its own, kept for as
long as the process runs the session: a crashed or killed holder's connection closes and the
server frees the lock at once (no expiry to wait out). ``session_leases`` still records who holds
it, so "session busy" can say which process. Waiting (``--wait``) retries until the deadline.
"""

from __future__ import annotations

import threading
import time

import psycopg

from kairox.core.clock import Clock
from kairox.core.errors import SessionBusy
from kairox.store.postgres.db import LOCK_LEASE, PgDatabase
from kairox.store.protocols import EventStore
from kairox.store.sessions import SessionRegistry

_RETRY_S = 0.05


class PostgresSessionRegistry(SessionRegistry):
    def __init__(self, db: PgDatabase, events: EventStore, clock: Clock) -> None:
        super().__init__(db, events, clock)
        self._pg = db
        self._held: dict[str, tuple[str, psycopg.Connection[tuple[object, ...]]]] = {}
        self._guard = threading.Lock()

    def acquire_lease(
        self, session_id: str, holder: str, *, ttl_s: float = 30.0, wait_s: float = 0.0
    ) -> None:
        """Take the session's advisory lock for ``holder``, waiting up to ``wait_s``."""
        with self._guard:
            held = self._held.get(session_id)
            if held is not None and held[0] == holder:
                return
        deadline = time.monotonic() + wait_s
        conn = psycopg.connect(self._pg.url, autocommit=True)
        try:
            while True:
                row = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_LEASE, session_id)
                ).fetchone()
                if row is not None and row[0]:
                    break
                if time.monotonic() >= deadline:
                    other = self._pg.query_one(
                        "SELECT holder FROM session_leases WHERE session_id = ?", (session_id,)
                    )
                    raise SessionBusy(self.get(session_id).name, other["holder"] if other else None)
                time.sleep(_RETRY_S)
            conn.execute(
                "INSERT INTO session_leases(session_id, holder, expires_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,"
                " expires_at = excluded.expires_at",
                (session_id, holder, time.time() + ttl_s),
            )
        except BaseException:
            conn.close()
            raise
        with self._guard:
            self._held[session_id] = (holder, conn)

    def renew_lease(self, session_id: str, holder: str, *, ttl_s: float = 30.0) -> None:
        """Nothing to renew: the lock lives as long as its connection."""

    def release_lease(self, session_id: str, holder: str) -> None:
        with self._guard:
            held = self._held.get(session_id)
            if held is None or held[0] != holder:
                return
            del self._held[session_id]
        conn = held[1]
        try:
            conn.execute(
                "DELETE FROM session_leases WHERE session_id = %s AND holder = %s",
                (session_id, holder),
            )
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_LEASE, session_id))
        finally:
            conn.close()

    def close(self) -> None:
        """Free every lease this process holds (closing a connection frees its locks)."""
        with self._guard:
            held, self._held = list(self._held.values()), {}
        for _, conn in held:
            conn.close()
