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

from kairox.store.chunks import (
    FileUpdate,
    FloatMatrix,
    IdArray,
    StoredChunk,
)
from kairox.store.chunks_sql import SqlChunkStore
from kairox.store.postgres.db import PgConnection, PgDatabase

_CHUNK_COLUMNS = (
    "c.id, c.workspace_id, c.path, c.ord, c.start_line, c.end_line, c.content, c.chunk_hash"
)


def vector_literal(row: Sequence[float] | FloatMatrix) -> str:
    """pgvector's text form of one vector."""
    return "[" + ",".join(repr(float(x)) for x in row) + "]"


class PostgresChunkStore(SqlChunkStore):
    """``ChunkStore`` on a ``PgDatabase``."""

    _db: PgDatabase

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

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        rows = self._db.query(
            "SELECT chunk_id, dims, embedding::real[] AS e FROM chunk_vectors "
            "WHERE workspace_id = ? AND model = ? ORDER BY chunk_id",
            (workspace_id, model),
        )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        dims = int(rows[-1]["dims"])
        return _matrix([r for r in rows if int(r["dims"]) == dims], dims)

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        """The vectors of ``model`` of these chunks (those that have one), by id; None when
        they are not all one size."""
        rows = self._db.query(
            "SELECT chunk_id, dims, embedding::real[] AS e FROM chunk_vectors "
            "WHERE workspace_id = ? AND model = ? AND chunk_id = ANY(?) ORDER BY chunk_id",
            (workspace_id, model, sorted(ids)),
        )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        sizes = {int(r["dims"]) for r in rows}
        return _matrix(rows, sizes.pop()) if len(sizes) == 1 else None

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
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} chunk ids but vectors of shape {matrix.shape}")
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


def _matrix(rows: Sequence[dict[str, Any]], dims: int) -> tuple[IdArray, FloatMatrix]:
    """(chunk_id, dims, e) rows of one size as ids and a float32 matrix."""
    ids = np.fromiter((r["chunk_id"] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.asarray([r["e"] for r in rows], dtype=np.float32).reshape(len(rows), dims)
    return ids, matrix
