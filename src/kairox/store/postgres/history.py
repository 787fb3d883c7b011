"""The history index on Postgres: units in the shared database and pgvector vectors (schema:
``kairox.store.postgres.schema``). Ranking is the in-memory BM25 (``kairox.retrieval.bm25``) over
the units ``kairox.store.history`` reads, so recall ranks the same on both stores. Vectors are
searched in NumPy, as on SQLite (a history is small next to a workspace).
"""

from __future__ import annotations

from typing import Any

from kairox.store.history import UNIT_COLUMNS, SqlHistoryStore
from kairox.store.postgres.db import PgConnection, PgDatabase
from kairox.store.postgres.vectors import PG_VECTORS, vector_literal
from kairox.store.records import HistoryUnit


class PostgresHistoryStore(SqlHistoryStore):
    _db: PgDatabase
    _vectors = PG_VECTORS

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)

    def _insert_unit(self, conn: PgConnection, unit: HistoryUnit) -> bool:
        cursor = conn.execute(
            f"INSERT INTO history_units({UNIT_COLUMNS}, length) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (
                unit.id, unit.workspace_id, unit.session_id, unit.turn, unit.role,
                unit.speaker, unit.ts, unit.content, unit.context, unit.length,
            ),
        )  # fmt: skip
        return int(cursor.rowcount) > 0

    def _write_vectors(
        self, conn: PgConnection, workspace_id: str, model: str, rows: list[tuple[int, Any]]
    ) -> None:
        conn.executemany(
            "INSERT INTO history_vectors(workspace_id, model, unit_id, dims, embedding) "
            "VALUES (?, ?, ?, ?, ?::vector) ON CONFLICT (workspace_id, model, unit_id) "
            "DO UPDATE SET dims = excluded.dims, embedding = excluded.embedding",
            [(workspace_id, model, i, int(v.shape[0]), vector_literal(v)) for i, v in rows],
        )
