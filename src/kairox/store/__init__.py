"""Storage: events, sessions, memories, chunks and the history index, on SQLite or Postgres.

The protocols every layer above types by are in ``kairox.store.protocols``.
"""

from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.store.migration import Migration
from kairox.store.protocols import EventStore

__all__ = ["Database", "EventStore", "Migration", "SqliteEventStore"]
