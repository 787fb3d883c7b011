"""``MemoryStore`` on Postgres: the shared SQL memory projection plus the locks Postgres needs.

SQLite serialises every write transaction; Postgres runs them side by side, so a decision locks
the memory's row (``FOR UPDATE``) before it reads the status, and changes to one (scope, owner,
key) take a transaction-scoped advisory lock. Two processes deciding the same proposal therefore
serialise, and the second sees the first's decision (exactly one ``MemoryAccepted`` or
``MemoryRejected``). Row locks are always taken before the event append's lock, never after.
"""

from __future__ import annotations

from kairox.core.types import MemoryScope
from kairox.store.memories import SqlMemoryStore
from kairox.store.postgres.db import LOCK_MEMORY_KEY
from kairox.store.sql import SqlConnection


class PostgresMemoryStore(SqlMemoryStore):
    _LOCK_ROW = " FOR UPDATE"

    def _lock_key(
        self, conn: SqlConnection, scope: MemoryScope, owner: str, key: str | None
    ) -> None:
        if key is not None:
            conn.execute(
                "SELECT pg_advisory_xact_lock(?, hashtext(?))",
                (LOCK_MEMORY_KEY, f"{scope.value}\x1f{owner}\x1f{key}"),
            )
