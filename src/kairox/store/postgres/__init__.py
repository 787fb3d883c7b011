"""The Postgres backend: events, memories, sessions, chunks, the history index and the memory
search index in one shared database.

Selected by ``[store] url = "postgresql://..."`` or ``$KAIROX_STORE_URL``. Needs the ``postgres``
extra (psycopg 3, its pool) and a server with the ``vector`` extension (pgvector).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kairox.core.clock import Clock
from kairox.core.errors import StoreError

if TYPE_CHECKING:
    from kairox.store.backend import StoreBackend


def open_postgres(url: str, clock: Clock) -> StoreBackend:
    """Connect to (and migrate) the Postgres store at ``url``."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise StoreError(
            "the Postgres store needs psycopg: pip install 'kairox[postgres]'"
        ) from None
    from kairox.store.backend import StoreBackend
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase, redact
    from kairox.store.postgres.events import PostgresEventStore
    from kairox.store.postgres.history import PostgresHistoryStore
    from kairox.store.postgres.memories import PostgresMemoryStore
    from kairox.store.postgres.memory_index import PostgresMemoryIndexStore
    from kairox.store.postgres.schema import MIGRATIONS
    from kairox.store.postgres.sessions import PostgresSessionRegistry
    from kairox.store.terms_upgrade import reindex_terms
    from kairox.store.tokens import SqlTokenStore

    db = PgDatabase.open(url, MIGRATIONS)
    reindex_terms(db)
    events = PostgresEventStore(db, clock)
    sessions = PostgresSessionRegistry(db, events, clock)
    return StoreBackend(
        kind="postgres",
        location=redact(url),
        db=db,
        events=events,
        memories=PostgresMemoryStore(db, events, clock),
        sessions=sessions,
        tokens=SqlTokenStore(db, clock),
        make_chunks=lambda: PostgresChunkStore(db),
        make_history=lambda: PostgresHistoryStore(db),
        make_memory_index=lambda: PostgresMemoryIndexStore(db),
    )
