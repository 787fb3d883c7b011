"""Opening the store a home names: SQLite by default, Postgres when a ``postgresql://`` URL is set.

``[store] url`` (or ``$KAIROX_STORE_URL``) selects the backend; everything above this module sees
only the protocols of ``kairox.store.protocols`` (``EventStore``, ``MemoryStore``,
``SessionStore``, ``TokenStore``, ``ChunkStore``, ``HistoryStore``, ``MemoryIndexStore``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.core.clock import Clock
from kairox.core.errors import ConfigError
from kairox.store.db import Database
from kairox.store.protocols import EventStore, MemoryStore, SessionStore, TokenStore
from kairox.store.sql import SqlDatabase

if TYPE_CHECKING:  # NumPy loads only when chunks or the history index are used
    from kairox.store.protocols import ChunkStore, HistoryStore, MemoryIndexStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


@dataclass
class StoreBackend:
    """One opened store: its database and the stores built on it, each typed by its protocol.
    ``kind`` is sqlite/postgres."""

    kind: str
    location: str
    db: SqlDatabase
    events: EventStore
    memories: MemoryStore
    sessions: SessionStore
    tokens: TokenStore
    make_chunks: Callable[[], ChunkStore]
    make_history: Callable[[], HistoryStore]
    make_memory_index: Callable[[], MemoryIndexStore]
    _chunks: ChunkStore | None = field(default=None, init=False)
    _history: HistoryStore | None = field(default=None, init=False)
    _memory_index: MemoryIndexStore | None = field(default=None, init=False)

    @property
    def chunks(self) -> ChunkStore:
        """The workspace chunk store, built on first use (it loads NumPy)."""
        if self._chunks is None:
            self._chunks = self.make_chunks()
        return self._chunks

    @property
    def history(self) -> HistoryStore:
        """The history (recall) index, built on first use (it loads NumPy)."""
        if self._history is None:
            self._history = self.make_history()
        return self._history

    @property
    def memory_index(self) -> MemoryIndexStore:
        """The memory search index, built on first use (it loads NumPy)."""
        if self._memory_index is None:
            self._memory_index = self.make_memory_index()
        return self._memory_index

    def close(self) -> None:
        for part in (self.sessions, self.events):
            close = getattr(part, "close", None)  # Postgres: leases and the LISTEN connection
            if callable(close):
                close()
        self.db.close()


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and str(url).startswith(POSTGRES_SCHEMES)


def open_store(database_file: Path, clock: Clock, url: str | None = None) -> StoreBackend:
    """The SQLite store at ``database_file``, or the Postgres store at ``url`` when given."""
    if url:
        if not is_postgres_url(url):
            raise ConfigError(
                f"unsupported store url '{url.split('://')[0]}://...'",
                key="store.url",
                fix="use a postgresql://user:password@host/dbname URL, or remove it for SQLite",
            )
        from kairox.store.postgres import open_postgres

        return open_postgres(url, clock)
    from kairox.store.events import SqliteEventStore
    from kairox.store.memories import SqliteMemoryStore
    from kairox.store.sessions import SessionRegistry
    from kairox.store.terms_upgrade import reindex_terms
    from kairox.store.tokens import SqlTokenStore

    db = Database.open(database_file)
    reindex_terms(db)
    events = SqliteEventStore(db, clock)
    return StoreBackend(
        kind="sqlite",
        location=str(database_file),
        db=db,
        events=events,
        memories=SqliteMemoryStore(db, events, clock),
        sessions=SessionRegistry(db, events, clock),
        tokens=SqlTokenStore(db, clock),
        make_chunks=lambda: _sqlite_chunks(db),
        make_history=lambda: _sqlite_history(db),
        make_memory_index=lambda: _sqlite_memory_index(db),
    )


def _sqlite_chunks(db: Database) -> ChunkStore:
    from kairox.store.chunks_sqlite import SqliteChunkStore

    return SqliteChunkStore(db)


def _sqlite_history(db: Database) -> HistoryStore:
    from kairox.store.history_sqlite import SqliteHistoryStore

    return SqliteHistoryStore(db)


def _sqlite_memory_index(db: Database) -> MemoryIndexStore:
    from kairox.store.memory_index_sqlite import SqliteMemoryIndexStore

    return SqliteMemoryIndexStore(db)
