"""The services of one home: the database, its stores and the approval policy, built from
explicit dependencies. The facade and the runtime share one instance. It sits below the runtime,
so commands that never talk to a model (``kairox memory list``) open it without the runtime.

The store is SQLite in the home unless ``[store] url`` / ``$KAIROX_STORE_URL`` names a Postgres
database; everything here is typed by the store protocols, so nothing above knows which.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.core.clock import Clock, SystemClock
from kairox.core.paths import database_path, resolve_home
from kairox.memory.service import MemoryPolicy, MemoryService
from kairox.store.backend import StoreBackend, open_store
from kairox.store.protocols import EventStore, MemoryStore, SessionStore, TokenStore
from kairox.store.sql import SqlDatabase

if TYPE_CHECKING:  # NumPy loads only when chunks are used
    from kairox.store.protocols import ChunkStore, HistoryStore, MemoryIndexStore

STORE_URL_ENV = "KAIROX_STORE_URL"


@dataclass
class Services:
    home: Path
    store: StoreBackend
    clock: Clock
    events: EventStore
    memories: MemoryStore
    sessions: SessionStore
    approval: MemoryService
    """The memory service: the approval policy and every other memory rule."""

    @property
    def history(self) -> HistoryStore:
        """The history (recall) index, in the store's own database (SQLite or Postgres)."""
        return self.store.history

    @property
    def memory_index(self) -> MemoryIndexStore:
        """The memory search index, in the store's own database (SQLite or Postgres)."""
        return self.store.memory_index

    @property
    def db(self) -> SqlDatabase:
        """The backend's database (SQLite or Postgres), for maintenance and tests."""
        return self.store.db

    @property
    def chunks(self) -> ChunkStore:
        return self.store.chunks

    @property
    def tokens(self) -> TokenStore:
        """The access tokens of the shared MCP server (in the store, so every server sees them)."""
        return self.store.tokens

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        clock: Clock | None = None,
        policy: MemoryPolicy | None = None,
        store_url: str | None = None,
    ) -> Services:
        root = resolve_home(home)
        clock = clock or SystemClock()
        url = store_url if store_url is not None else configured_store_url()
        store = open_store(database_path(root), clock, url)
        return cls(
            home=root,
            store=store,
            clock=clock,
            events=store.events,
            memories=store.memories,
            sessions=store.sessions,
            approval=MemoryService(store.memories, policy),
        )

    def close(self) -> None:
        self.store.close()


def configured_store_url() -> str | None:
    """``$KAIROX_STORE_URL``, else ``[store] url`` of the user config, else None (SQLite)."""
    env = os.environ.get(STORE_URL_ENV)
    if env:
        return env
    from kairox.core.config_load import user_store_url

    return user_store_url()
