"""``ChunkStore`` on Postgres: chunks, file states and pgvector vectors in the shared database.

Ranking runs in the searching process, as for SQLite (``kairox.retrieval.search``): the keyword
index and the vector matrix of a workspace are read from here once and caught up when its
generation moves, so a search is one round trip (the hits' texts). Workspaces, file states,
deletes and the keyword feed are the shared SQL of ``kairox.store.chunks_sql.SqlChunkStore``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kairox.store.chunks_sql import SqlChunkStore
from kairox.store.postgres.db import PgConnection, PgDatabase
from kairox.store.postgres.vectors import PG_VECTORS, vector_literal
from kairox.store.records import FileUpdate, StoredChunk
from kairox.store.vectors import FloatMatrix, one_per_id

_CHUNK_COLUMNS = (
    "c.id, c.workspace_id, c.path, c.ord, c.start_line, c.end_line, c.content, c.chunk_hash"
)


class PostgresChunkStore(SqlChunkStore):
    """``ChunkStore`` on a ``PgDatabase``."""

    _db: PgDatabase
    _vectors = PG_VECTORS

    def __init__(self, db: PgDatabase, *, path_weight: float = 0.5) -> None:
        super().__init__(db, path_weight=path_weight)

    def _insert_chunks(
        self, conn: PgConnection, workspace_id: str, update: FileUpdate
    ) -> list[int]:
        """One batch (``tsv`` is a generated column), then the ids read back by ``ord``."""
        path = update.state.path
        if not update.chunks:
            return []
        conn.raw.cursor().executemany(
            "INSERT INTO chunks(workspace_id, path, ord, start_line, end_line, "
            "file_hash, chunk_hash, content) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (workspace_id, path, c.ord, c.start_line, c.end_line,
                 update.state.file_hash, c.chunk_hash, c.text)
                for c in update.chunks
            ],
        )  # fmt: skip
        by_ord = {
            int(r["ord"]): int(r["id"])
            for r in conn.execute(
                "SELECT id, ord FROM chunks WHERE workspace_id = ? AND path = ?",
                (workspace_id, path),
            )
        }
        return [by_ord[c.ord] for c in update.chunks]

    def vectors_by_hash(
        self, workspace_id: str, paths: Sequence[str], model: str
    ) -> dict[str, bytes]:
        if not paths:
            return {}
        rows = self._db.query(
            "SELECT c.chunk_hash, v.embedding::real[] AS e FROM chunks c JOIN chunk_vectors v "
            "ON v.workspace_id = c.workspace_id AND v.model = ? AND v.chunk_id = c.id "
            "WHERE c.workspace_id = ? AND c.path = ANY(?)",
            (model, workspace_id, list(paths)),
        )
        return {r["chunk_hash"]: np.asarray(r["e"], dtype="<f4").tobytes() for r in rows}

    def get_chunks(self, workspace_id: str, ids: Sequence[int]) -> list[StoredChunk]:
        if not ids:
            return []
        rows = self._db.query(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE c.id = ANY(?) AND c.workspace_id = ?",
            (list(ids), workspace_id),
        )
        by_id = {int(r["id"]): _chunk(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def _insert_vectors(
        self,
        conn: PgConnection,
        workspace_id: str,
        model: str,
        ids: list[int],
        vectors: FloatMatrix,
    ) -> None:
        matrix = one_per_id(ids, vectors)
        dims = int(matrix.shape[1])
        conn.raw.cursor().executemany(
            "INSERT INTO chunk_vectors(workspace_id, model, chunk_id, dims, embedding) "
            "VALUES (%s, %s, %s, %s, %s::vector) ON CONFLICT (workspace_id, model, chunk_id) "
            "DO UPDATE SET dims = excluded.dims, embedding = excluded.embedding",
            [
                (workspace_id, model, cid, dims, vector_literal(row))
                for cid, row in zip(ids, matrix, strict=True)
            ],
        )


def _chunk(row: dict[str, Any]) -> StoredChunk:
    return StoredChunk(
        int(row["id"]),
        row["workspace_id"],
        row["path"],
        int(row["ord"]),
        int(row["start_line"]),
        int(row["end_line"]),
        row["content"],
        row["chunk_hash"],
    )
