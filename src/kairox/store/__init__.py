"""Storage: one SQLite database per home directory holding events, memories and chunks."""

from kairox.store.db import Database, Migration
from kairox.store.events import EventStore, SqliteEventStore

__all__ = ["Database", "EventStore", "Migration", "SqliteEventStore"]
