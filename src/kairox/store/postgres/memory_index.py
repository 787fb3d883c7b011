"""The memory search index on Postgres: units in the shared database and pgvector vectors (schema:
``kairox.store.postgres.schema``). Ranking is the in-memory BM25 (``kairox.retrieval.bm25``)
over the units ``kairox.store.memory_index`` reads, so memory search ranks the same on both
stores; vectors are searched in NumPy, as on SQLite."""

from __future__ import annotations

from typing import Any

from kairox.store.memory_index import SqlMemoryIndexStore
from kairox.store.postgres.db import PgConnection, PgDatabase
from kairox.store.postgres.vectors import PG_VECTORS, vector_literal
from kairox.store.records import MemoryUnit


class PostgresMemoryIndexStore(SqlMemoryIndexStore):
    _db: PgDatabase
    _vectors = PG_VECTORS

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)

    def _insert_unit(self, conn: PgConnection, unit: MemoryUnit) -> None:
        # Processes sharing the database catch up concurrently: the same memory from the same
        # events may be written twice, so a second insert is an update to the same values.
        conn.execute(
            "INSERT INTO memory_units(memory_id, workspace_id, key, body, length) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET "
            "workspace_id = excluded.workspace_id, key = excluded.key, body = excluded.body, "
            "length = excluded.length",
            (unit.memory_id, unit.workspace_id, unit.key, unit.body, unit.length),
        )

    def _write_vectors(self, conn: PgConnection, model: str, rows: list[tuple[int, Any]]) -> None:
        conn.executemany(
            "INSERT INTO memory_unit_vectors(unit_id, model, dims, embedding) "
            "VALUES (?, ?, ?, ?::vector) ON CONFLICT (model, unit_id) "
            "DO UPDATE SET dims = excluded.dims, embedding = excluded.embedding",
            [(i, model, int(v.shape[0]), vector_literal(v)) for i, v in rows],
        )
