"""The history index on SQLite: units in the home database, vectors as float32 BLOBs (schema:
``kairox.store.schema.history``). Ranking is the in-memory BM25 (``kairox.retrieval.bm25``) over
the units ``kairox.store.history`` reads."""

from __future__ import annotations

import sqlite3
from typing import Any

from kairox.store.db import Database
from kairox.store.history import UNIT_COLUMNS, SqlHistoryStore
from kairox.store.records import HistoryUnit
from kairox.store.vectors import SQLITE_VECTORS


class SqliteHistoryStore(SqlHistoryStore):
    _db: Database
    _vectors = SQLITE_VECTORS

    def __init__(self, db: Database) -> None:
        super().__init__(db)

    def _insert_unit(self, conn: sqlite3.Connection, unit: HistoryUnit) -> bool:
        cursor = conn.execute(
            f"INSERT OR IGNORE INTO history_units({UNIT_COLUMNS}, length) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                unit.id, unit.workspace_id, unit.session_id, unit.turn, unit.role,
                unit.speaker, unit.ts, unit.content, unit.context, unit.length,
            ),
        )  # fmt: skip
        return cursor.rowcount > 0

    def _write_vectors(
        self, conn: sqlite3.Connection, workspace_id: str, model: str, rows: list[tuple[int, Any]]
    ) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO history_vectors(workspace_id, model, unit_id, dims, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            [(workspace_id, model, i, int(v.shape[0]), v.tobytes()) for i, v in rows],
        )
