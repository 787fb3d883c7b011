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


class PostgresMemoryStore(SqlMemoryStore):
    _LOCK_ROW = " FOR UPDATE"

    def _lock_keys(self, conn: SqlConnection, keys: Sequence[MemoryKey]) -> None:
        names = sorted(
            {f"{scope.value}\x1f{owner}\x1f{key}" for scope, owner, key in keys if key is not None}
        )
        if len(names) == 1:
            conn.execute(
                "SELECT pg_advisory_xact_lock(?, hashtext(?))", (LOCK_MEMORY_KEY, names[0])
            )
        elif names:  # one statement, in hash order so two bulk writers cannot deadlock
            conn.execute(
                "SELECT count(pg_advisory_xact_lock(?, h)) AS n FROM"
                " (SELECT DISTINCT hashtext(n) AS h FROM unnest(?::text[]) AS n ORDER BY h) AS k",
                (LOCK_MEMORY_KEY, names),
            )
