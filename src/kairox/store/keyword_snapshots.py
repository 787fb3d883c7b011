"""Saved keyword indexes: one serialised in-memory BM25 index (``kairox.retrieval.bm25``) per
index kind and scope, with the generation of the scope it was built at.

Building the keyword index of a large scope from its texts takes seconds (44k chunks: 5-9 s), and
every fresh process (``kairox search``, ``kairox send``) paid it. A saved index loads in a fraction
of that and is caught up from the store like an in-memory one. It is derived data on both
backends: a missing, older or unreadable snapshot costs a rebuild, never a result. The bytes are
NumPy arrays and text (``kairox.retrieval.keyword_snapshot``), never pickles, so a shared database
cannot run code in a reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kairox.store.sql import SqlDatabase


@dataclass(frozen=True, slots=True)
class KeywordSnapshot:
    """A saved keyword index of a scope at ``generation``."""

    generation: int
    data: bytes


@runtime_checkable
class KeywordSnapshots(Protocol):
    """A ``RankStore`` that keeps its scopes' keyword indexes between processes."""

    def load_keyword_snapshot(self, scope: str) -> KeywordSnapshot | None: ...

    def save_keyword_snapshot(self, scope: str, generation: int, data: bytes) -> None: ...


class SqlKeywordSnapshots:
    """``KeywordSnapshots`` on a ``SqlDatabase`` (the same SQL on SQLite and Postgres): a row per
    (``snapshot_kind``, scope) of ``keyword_snapshots``."""

    snapshot_kind: str
    _db: SqlDatabase

    def load_keyword_snapshot(self, scope: str) -> KeywordSnapshot | None:
        row = self._db.query_one(
            "SELECT generation, data FROM keyword_snapshots WHERE kind = ? AND scope = ?",
            (self.snapshot_kind, scope),
        )
        if row is None:
            return None
        return KeywordSnapshot(int(row["generation"]), bytes(row["data"]))

    def save_keyword_snapshot(self, scope: str, generation: int, data: bytes) -> None:
        if getattr(self._db, "readonly", False):
            return  # a read-only home is searched, not written: the next writer saves it
        self._db.execute(
            "INSERT INTO keyword_snapshots(kind, scope, generation, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(kind, scope) DO UPDATE SET generation = excluded.generation, "
            "data = excluded.data",
            (self.snapshot_kind, scope, generation, data),
        )
