"""``MemoryStore`` on Postgres: the shared SQL memory projection plus the locks Postgres needs.

SQLite serialises every write transaction; Postgres runs them side by side, so a decision locks
the memory's row (``FOR UPDATE``) before it reads the status, and changes to one (scope, owner,
key) take a transaction-scoped advisory lock. Two processes deciding the same proposal therefore
serialise, and the second sees the first's decision (exactly one ``MemoryAccepted`` or
``MemoryRejected``). Row locks are always taken before the event append's lock, never after.
"""

from __future__ import annotations

from collections.abc import Sequence

from kairox.store.memories import MemoryKey, SqlMemoryStore
from kairox.store.postgres.db import LOCK_MEMORY_KEY
from kairox.store.sql import SqlConnection

KEY_BUCKETS = 1024  # a power of two


class PostgresMemoryStore(SqlMemoryStore):
    _LOCK_ROW = " FOR UPDATE"

    def _lock_keys(self, conn: SqlConnection, keys: Sequence[MemoryKey]) -> None:
        names = sorted(
            {f"{scope.value}\x1f{owner}\x1f{key}" for scope, owner, key in keys if key is not None}
        )
        # Keys share KEY_BUCKETS locks, so an import of 100k keys holds at most that many: the lock
        # table is sized by max_locks_per_transaction x max_connections, and a server configured
        # smaller than the one the tests run would run out of shared memory at one lock per key.
        if len(names) == 1:
            conn.execute(
                "SELECT pg_advisory_xact_lock(?, hashtext(?) & ?)",
                (LOCK_MEMORY_KEY, names[0], KEY_BUCKETS - 1),
            )
        elif names:  # one statement, in bucket order so two bulk writers cannot deadlock
            conn.execute(
                "SELECT count(pg_advisory_xact_lock(?, b)) AS n FROM"
                " (SELECT DISTINCT hashtext(n) & ? AS b FROM unnest(?::text[]) AS n ORDER BY b)"
                " AS k",
                (LOCK_MEMORY_KEY, KEY_BUCKETS - 1, names),
            )
