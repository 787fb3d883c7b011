"""The memory search index on SQLite: units in the home database, vectors as float32 BLOBs
(schema: ``kairox.store.schema.memory_index``). Ranking is the in-memory BM25
(``kairox.retrieval.bm25``) over the units ``kairox.store.memory_index`` reads."""

from __future__ import annotations

import sqlite3
from typing import Any

from kairox.store.db import Database
from kairox.store.memory_index import SqlMemoryIndexStore
from kairox.store.records import MemoryUnit
from kairox.store.vectors import SQLITE_VECTORS


class SqliteMemoryIndexStore(SqlMemoryIndexStore):
    _db: Database
    _vectors = SQLITE_VECTORS

    def __init__(self, db: Database) -> None:
        super().__init__(db)

    def _insert_unit(self, conn: sqlite3.Connection, unit: MemoryUnit) -> None:
        conn.execute(
            "INSERT INTO memory_units(memory_id, workspace_id, key, body, length) "
            "VALUES (?, ?, ?, ?, ?)",
            (unit.memory_id, unit.workspace_id, unit.key, unit.body, unit.length),
        )

    def _write_vectors(
        self, conn: sqlite3.Connection, model: str, rows: list[tuple[int, Any]]
    ) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO memory_unit_vectors(unit_id, model, dims, vector) "
            "VALUES (?, ?, ?, ?)",
            [(i, model, int(v.shape[0]), v.tobytes()) for i, v in rows],
        )
