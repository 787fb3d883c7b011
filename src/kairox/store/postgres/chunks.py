"""``ChunkStore`` on Postgres: chunks, file states and pgvector vectors in the shared database.

Ranking runs in the searching process, as for SQLite (``kairox.retrieval.search``): the keyword
index of a workspace is read from here once and caught up when its generation moves. The vector
side of a big workspace is a pgvector HNSW index this store keeps (``IndexedVectors``, in
``kairox.store.postgres.chunk_index``): every process shares it, none holds the workspace's matrix
or builds a graph of its own, and a search asks it for the query's nearest vectors in one round
trip. Smaller workspaces' vectors are read once into the ranker's matrix (in binary, 4 bytes a
float), as on SQLite. Workspaces, file states, deletes and the keyword feed are the shared SQL of
``kairox.store.chunks_sql.SqlChunkStore``; writing files is batched here (one statement per step
for all the files of a batch, chunks and vectors sent with ``COPY``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kairox.store.chunks_sql import UPSERT_FILE, SqlChunkStore, file_row
from kairox.store.postgres.chunk_index import ChunkVectorIndexes
from kairox.store.postgres.db import PgConnection, PgDatabase
from kairox.store.postgres.vectors import PG_VECTORS, vector_literal, vector_payloads
from kairox.store.records import FileUpdate, StoredChunk
from kairox.store.sql import IN_BATCH
from kairox.store.vectors import FloatMatrix, IdArray, VectorReader, one_per_id

_CHUNK_COLUMNS = (
    "c.id, c.workspace_id, c.path, c.ord, c.start_line, c.end_line, c.content, c.chunk_hash"
)


def _binary_rows(rows: Sequence[Any], dims: int) -> FloatMatrix:
    """pgvector's binary values (2-byte size, 2 unused, big-endian float32s), in one go."""
    raw = np.frombuffer(b"".join(r["vec"] for r in rows), dtype=">f4")
    return raw.reshape(len(rows), dims + 1)[:, 1:].astype(np.float32)


_BINARY_VECTORS = VectorReader("v.embedding", _binary_rows)


class PostgresChunkStore(ChunkVectorIndexes, SqlChunkStore):
    """``ChunkStore`` and ``IndexedVectors`` on a ``PgDatabase``."""

    _db: PgDatabase
    _vectors = PG_VECTORS

    def __init__(self, db: PgDatabase, *, path_weight: float = 0.5) -> None:
        super().__init__(db, path_weight=path_weight)
        self._scope_rows = {}

    def write_files(
        self, workspace_id: str, updates: Sequence[FileUpdate], *, model: str | None
    ) -> int:
        """As ``SqlChunkStore.write_files`` (the same rows), in a few statements for the whole
        batch: one delete, the file states pipelined, the chunk ids drawn from their sequence in
        one go, then the chunks and their vectors copied (``COPY``, vectors in binary)."""
        paths = [u.state.path for u in updates]
        if len(set(paths)) != len(paths):  # a path twice: the row-by-row order decides
            return super().write_files(workspace_id, updates, model=model)
        total = sum(len(u.chunks) for u in updates)
        with self._db.atomic() as conn:
            removed = conn.execute(
                "DELETE FROM chunks WHERE workspace_id = ? AND path = ANY(?)",
                (workspace_id, paths),
            ).rowcount
            conn.executemany(UPSERT_FILE, [file_row(workspace_id, u.state) for u in updates])
            ids = self._new_ids(conn, total)
            chunk_rows, vector_ids, blocks = [], [], []
            at = 0
            for update in updates:
                own = ids[at : at + len(update.chunks)]
                at += len(own)
                state = update.state
                chunk_rows += [
                    (cid, workspace_id, state.path, c.ord, c.start_line, c.end_line,
                     state.file_hash, c.chunk_hash, c.text)
                    for cid, c in zip(own, update.chunks, strict=True)
                ]  # fmt: skip
                if model is not None and update.vectors is not None and own:
                    blocks.append(one_per_id(own, update.vectors))
                    vector_ids += own
            self._copy_chunks(conn, chunk_rows)
            if model is not None and vector_ids:
                self._copy_vectors(conn, workspace_id, model, vector_ids, np.vstack(blocks))
            self._bump(conn, workspace_id, total - max(int(removed), 0))
        return total

    @staticmethod
    def _new_ids(conn: PgConnection, count: int) -> list[int]:
        """``count`` fresh chunk ids, ascending (what row-by-row inserts would have drawn)."""
        if not count:
            return []
        rows = conn.execute(
            "SELECT nextval(pg_get_serial_sequence('chunks', 'id')) AS id "
            "FROM generate_series(1, ?)",
            (count,),
        ).fetchall()
        return sorted(int(r["id"]) for r in rows)

    @staticmethod
    def _copy_chunks(conn: PgConnection, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        with conn.raw.cursor().copy(
            "COPY chunks (id, workspace_id, path, ord, start_line, end_line, file_hash, "
            "chunk_hash, content) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row(row)

    @staticmethod
    def _copy_vectors(
        conn: PgConnection, workspace_id: str, model: str, ids: list[int], matrix: FloatMatrix
    ) -> None:
        """New chunks' vectors (none can be there yet), in pgvector's binary form."""
        dims = int(matrix.shape[1])
        with conn.raw.cursor().copy(
            "COPY chunk_vectors (workspace_id, model, chunk_id, dims, embedding) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", "int8", "int4", "bytea"])
            for cid, payload in zip(ids, vector_payloads(matrix), strict=True):
                copy.write_row((workspace_id, model, cid, dims, payload))

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        """Read in binary: 100k vectors of 384 as text floats took most of a first search."""
        with self._db.read() as conn:
            rows = conn.query_binary(
                "SELECT v.chunk_id AS id, v.dims, v.embedding AS vec FROM chunk_vectors v "
                "WHERE v.workspace_id = ? AND v.model = ? ORDER BY v.chunk_id",
                (workspace_id, model),
            )
        return _BINARY_VECTORS.newest(rows)

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        wanted = sorted(ids)
        rows: list[Any] = []
        with self._db.read() as conn:
            for start in range(0, len(wanted), IN_BATCH):
                rows += conn.query_binary(
                    "SELECT v.chunk_id AS id, v.dims, v.embedding AS vec FROM chunk_vectors v "
                    "WHERE v.workspace_id = ? AND v.model = ? AND v.chunk_id = ANY(?) "
                    "ORDER BY v.chunk_id",
                    (workspace_id, model, wanted[start : start + IN_BATCH]),
                )
        return _BINARY_VECTORS.one_size(rows)

    def _insert_chunks(
        self, conn: PgConnection, workspace_id: str, update: FileUpdate
    ) -> list[int]:
        """One batch, then the ids read back by ``ord``."""
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
