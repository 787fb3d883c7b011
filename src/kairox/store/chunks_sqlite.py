"""The SQLite ``ChunkStore`` (FTS5 + float32 BLOB vectors); the protocol is in
``kairox.store.protocols``.

Every method takes the ``workspace_id`` explicitly, term statistics included. The SQL shared
with Postgres is ``kairox.store.chunks_sql.SqlChunkStore``'s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from kairox.store.chunks_sql import SqlChunkStore
from kairox.store.db import Database
from kairox.store.records import FileUpdate, StoredChunk
from kairox.store.vector_index_files import IndexFiles, index_files
from kairox.store.vectors import SQLITE_VECTORS, FloatMatrix, one_per_id


class SqliteChunkStore(SqlChunkStore):
    """``ChunkStore`` on the home database (schema: ``kairox.store.schema.chunks``)."""

    _db: Database
    _vectors = SQLITE_VECTORS

    def __init__(self, db: Database, *, path_weight: float = 0.5) -> None:
        super().__init__(db, path_weight=path_weight)

    def vector_index_files(self, scope: str, model: str) -> IndexFiles | None:
        """``VectorIndexFiles``: beside the database file (none for an in-memory database)."""
        if self._db.path == ":memory:":
            return None
        return index_files(self._db.path, self._db.readonly, self.snapshot_kind, scope, model)

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
        matrix = one_per_id(ids, vectors)
        dims = int(matrix.shape[1])
        conn.executemany(
            "INSERT OR REPLACE INTO chunk_vectors(workspace_id, model, chunk_id, dims, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (workspace_id, model, cid, dims, row.tobytes())
                for cid, row in zip(ids, matrix, strict=True)
            ],
        )
