"""The SQLite ``ChunkStore`` (FTS5 + float32 BLOB vectors); the protocol is in
``kairox.store.protocols``.

Every method takes the ``workspace_id`` explicitly, term statistics included. The SQL shared
with Postgres is ``kairox.store.chunks_sql.SqlChunkStore``'s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from kairox.store.chunks import FileUpdate, FloatMatrix, IdArray, StoredChunk
from kairox.store.chunks_sql import SqlChunkStore
from kairox.store.db import Database


class SqliteChunkStore(SqlChunkStore):
    """``ChunkStore`` on the home database (schema: ``kairox.store.schema.chunks``)."""

    _db: Database

    def __init__(self, db: Database, *, path_weight: float = 0.5) -> None:
        super().__init__(db, path_weight=path_weight)

    def _insert_chunks(
        self, conn: sqlite3.Connection, workspace_id: str, update: FileUpdate
    ) -> list[int]:
        """Row by row, each id read back (FTS rows follow by trigger)."""
        ids = []
        for chunk in update.chunks:
            cursor = conn.execute(
                "INSERT INTO chunks(workspace_id, path, ord, start_line, end_line, "
                "file_hash, chunk_hash, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    workspace_id, update.state.path, chunk.ord, chunk.start_line,
                    chunk.end_line, update.state.file_hash, chunk.chunk_hash, chunk.text,
                ),
            )  # fmt: skip
            assert cursor.lastrowid is not None
            ids.append(cursor.lastrowid)
        return ids

    def vectors_by_hash(
        self, workspace_id: str, paths: Sequence[str], model: str
    ) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for path in paths:
            rows = self._db.query(
                "SELECT c.chunk_hash, v.vector FROM chunks c JOIN chunk_vectors v "
                "ON v.workspace_id = c.workspace_id AND v.model = ? AND v.chunk_id = c.id "
                "WHERE c.workspace_id = ? AND c.path = ?",
                (model, workspace_id, path),
            )
            found.update((r[0], bytes(r[1])) for r in rows)
        return found

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        rows = self._db.query(
            "SELECT chunk_id, dims, vector FROM chunk_vectors "
            "WHERE workspace_id = ? AND model = ? ORDER BY chunk_id",
            (workspace_id, model),
        )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        dims = int(rows[-1][1])
        if any(int(r[1]) != dims for r in rows):
            # A backend changed its output size under the same model id: use the newest shape;
            # the other chunks fall back to keyword search until they are re-embedded.
            rows = [r for r in rows if int(r[1]) == dims]
        return _matrix(rows, dims)

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        """The vectors of ``model`` of these chunks (those that have one), by id; None when
        they are not all one size."""
        rows: list[sqlite3.Row] = []
        wanted = sorted(ids)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            rows += self._db.query(
                "SELECT chunk_id, dims, vector FROM chunk_vectors WHERE workspace_id = ? "
                f"AND model = ? AND chunk_id IN ({marks}) ORDER BY chunk_id",
                (workspace_id, model, *part),
            )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        sizes = {int(r[1]) for r in rows}
        return _matrix(rows, sizes.pop()) if len(sizes) == 1 else None

    def get_chunks(self, workspace_id: str, ids: Sequence[int]) -> list[StoredChunk]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._db.query(
            # "+workspace_id" keeps the planner on rowid lookups, not a scan of the workspace.
            "SELECT id, workspace_id, path, ord, start_line, end_line, content, chunk_hash "
            f"FROM chunks WHERE id IN ({marks}) AND +workspace_id = ?",
            (*ids, workspace_id),
        )
        by_id = {int(r[0]): StoredChunk(*r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def _insert_vectors(
        self,
        conn: sqlite3.Connection,
        workspace_id: str,
        model: str,
        ids: list[int],
        vectors: FloatMatrix,
    ) -> None:
        matrix = np.ascontiguousarray(vectors, dtype="<f4")
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} chunk ids but vectors of shape {matrix.shape}")
        dims = int(matrix.shape[1])
        conn.executemany(
            "INSERT OR REPLACE INTO chunk_vectors(workspace_id, model, chunk_id, dims, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (workspace_id, model, cid, dims, row.tobytes())
                for cid, row in zip(ids, matrix, strict=True)
            ],
        )


def _matrix(rows: Sequence[sqlite3.Row], dims: int) -> tuple[IdArray, FloatMatrix]:
    """(chunk_id, dims, vector BLOB) rows of one size as ids and a float32 matrix."""
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    blob = b"".join(r[2] for r in rows)
    matrix = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dims)
    return ids, matrix
