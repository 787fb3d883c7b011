"""The ``ChunkStore`` SQL both backends share: workspaces, file states, deletes, missing vectors.

Keyword search ranks in process on both (``kairox.retrieval.bm25``); vectors differ (float32 BLOBs
on SQLite, pgvector on Postgres), and so does inserting a file's chunks; those live in
``kairox.store.chunks_sqlite`` and ``kairox.store.postgres.chunks``, which subclass
``SqlChunkStore`` and fill in ``_insert_chunks``, ``_insert_vectors`` and their ``VectorReader``.
Rows are read by column name, so the same statements serve both.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from kairox.store.keyword_snapshots import SqlKeywordSnapshots
from kairox.store.records import FileState, FileUpdate
from kairox.store.sql import SqlConnection, SqlDatabase, query_in
from kairox.store.vectors import FloatMatrix, IdArray, VectorReader


class SqlChunkStore(SqlKeywordSnapshots):
    """The part of ``ChunkStore`` that is the same SQL on every backend."""

    _vectors: VectorReader
    snapshot_kind = "chunks"

    def __init__(self, db: SqlDatabase, *, path_weight: float = 0.5) -> None:
        self._db = db
        self.keyword_weights: tuple[float, ...] = (path_weight, 1.0)  # (path, content)

    def _insert_chunks(
        self, conn: SqlConnection, workspace_id: str, update: FileUpdate
    ) -> list[int]:
        """Insert the file's chunks (old ones are gone); their ids in ``update.chunks`` order."""
        raise NotImplementedError

    def _insert_vectors(
        self,
        conn: SqlConnection,
        workspace_id: str,
        model: str,
        ids: list[int],
        vectors: FloatMatrix,
    ) -> None:
        """Store one vector per chunk id under ``model``, replacing any there."""
        raise NotImplementedError

    def ensure_workspace(self, workspace_id: str, root: str) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                "INSERT INTO chunk_workspaces(workspace_id, root) VALUES (?, ?) "
                "ON CONFLICT(workspace_id) DO UPDATE SET root = excluded.root",
                (workspace_id, root),
            )

    def chunker(self, workspace_id: str) -> str:
        row = self._db.query_one(
            "SELECT chunker FROM chunk_workspaces WHERE workspace_id = ?", (workspace_id,)
        )
        return str(row["chunker"]) if row else ""

    def set_chunker(self, workspace_id: str, signature: str) -> None:
        with self._db.atomic() as conn:
            conn.execute(
                "UPDATE chunk_workspaces SET chunker = ? WHERE workspace_id = ?",
                (signature, workspace_id),
            )

    def generation(self, workspace_id: str) -> int:
        row = self._db.query_one(
            "SELECT generation FROM chunk_workspaces WHERE workspace_id = ?", (workspace_id,)
        )
        return int(row["generation"]) if row else -1

    def chunk_count(self, workspace_id: str) -> int:
        row = self._db.query_one(
            "SELECT chunk_count FROM chunk_workspaces WHERE workspace_id = ?", (workspace_id,)
        )
        return int(row["chunk_count"]) if row else 0

    def keyword_keys(self, workspace_id: str) -> list[tuple[int, str]]:
        """Each chunk's id and version (its path and text hash: ids may be reused)."""
        rows = self._db.query(
            "SELECT id, path, chunk_hash FROM chunks WHERE workspace_id = ?", (workspace_id,)
        )
        return [(int(r["id"]), f"{r['path']}\0{r['chunk_hash']}") for r in rows]

    def keyword_documents(
        self, workspace_id: str, ids: Sequence[int] | None = None, *, after_id: int = 0
    ) -> list[tuple[int, tuple[str, ...]]]:
        """(id, (path, text)) of chunks, by id: ``ids``, or all above ``after_id``."""
        sql = "SELECT id, path, content FROM chunks WHERE workspace_id = ?"
        if ids is None:
            rows = self._db.query(f"{sql} AND id > ? ORDER BY id", (workspace_id, after_id))
        else:
            rows = query_in(self._db, sql + " AND id IN ({ids}) ORDER BY id", (workspace_id,), ids)
        return [(int(r["id"]), (str(r["path"]), str(r["content"]))) for r in rows]

    def vector_keys(self, workspace_id: str, model: str) -> list[tuple[int, str]]:
        """(chunk id, version) of every vector of ``model``: the chunk's path, text hash and the
        vector's size, so a reused id or a re-embedded chunk reads as a new vector."""
        rows = self._db.query(
            "SELECT v.chunk_id, v.dims, c.path, c.chunk_hash FROM chunk_vectors v "
            "JOIN chunks c ON c.id = v.chunk_id WHERE v.workspace_id = ? AND v.model = ?",
            (workspace_id, model),
        )
        return [(int(r["chunk_id"]), f"{r['path']}\0{r['chunk_hash']}\0{r['dims']}") for r in rows]

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        rows = self._db.query(
            f"SELECT v.chunk_id AS id, v.dims, {self._vectors.column} AS vec FROM chunk_vectors v "
            "WHERE v.workspace_id = ? AND v.model = ? ORDER BY v.chunk_id",
            (workspace_id, model),
        )
        return self._vectors.newest(rows)

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        """The vectors of ``model`` of these chunks (those that have one), by id; None when
        they are not all one size."""
        sql = (
            f"SELECT v.chunk_id AS id, v.dims, {self._vectors.column} AS vec FROM chunk_vectors v "
            "WHERE v.workspace_id = ? AND v.model = ? AND v.chunk_id IN ({ids}) ORDER BY v.chunk_id"
        )
        return self._vectors.one_size(query_in(self._db, sql, (workspace_id, model), ids))

    def file_states(self, workspace_id: str) -> dict[str, FileState]:
        rows = self._db.query(
            "SELECT path, size, mtime_ns, file_hash, indexed_ns FROM chunk_files "
            "WHERE workspace_id = ?",
            (workspace_id,),
        )
        return {
            r["path"]: FileState(
                r["path"], r["size"], r["mtime_ns"], r["file_hash"], r["indexed_ns"]
            )
            for r in rows
        }

    def write_files(
        self, workspace_id: str, updates: Sequence[FileUpdate], *, model: str | None
    ) -> int:
        """Replace each file's chunks (keyword index and vectors follow); returns chunks written."""
        written = 0
        with self._db.atomic() as conn:
            removed = 0
            for update in updates:
                removed += self._delete_chunks(conn, workspace_id, update.state.path)
                self._upsert_file(conn, workspace_id, update.state)
                ids = self._insert_chunks(conn, workspace_id, update)
                written += len(ids)
                if model is not None and update.vectors is not None and ids:
                    self._insert_vectors(conn, workspace_id, model, ids, update.vectors)
            self._bump(conn, workspace_id, written - removed)
        return written

    def touch_files(self, workspace_id: str, states: Sequence[FileState]) -> None:
        if not states:
            return
        with self._db.atomic() as conn:
            for state in states:
                self._upsert_file(conn, workspace_id, state)

    def delete_files(self, workspace_id: str, paths: Sequence[str]) -> int:
        if not paths:
            return 0
        with self._db.atomic() as conn:
            removed = 0
            for path in paths:
                removed += self._delete_chunks(conn, workspace_id, path)
                conn.execute(
                    "DELETE FROM chunk_files WHERE workspace_id = ? AND path = ?",
                    (workspace_id, path),
                )
            self._bump(conn, workspace_id, -removed)
        return removed

    def count_missing_vectors(self, workspace_id: str, model: str) -> int:
        """The workspace's chunks less its vectors of ``model``: each vector has its chunk
        (the foreign key deletes it with the chunk) and a chunk one vector per model (the
        primary key). Two index counts; probing every chunk's vector read the whole vectors
        table (0.8 s of an unchanged re-index at 68k chunks)."""
        row = self._db.query_one(
            "SELECT (SELECT count(*) FROM chunks WHERE workspace_id = ?) - (SELECT count(*) "
            "FROM chunk_vectors WHERE workspace_id = ? AND model = ?) AS n",
            (workspace_id, workspace_id, model),
        )
        return max(int(row["n"]), 0) if row else 0

    def chunks_missing_vectors(
        self, workspace_id: str, model: str, *, limit: int
    ) -> list[tuple[int, str]]:
        rows = self._db.query(
            "SELECT c.id, c.content FROM chunks c WHERE c.workspace_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM chunk_vectors v WHERE v.workspace_id = c.workspace_id "
            "AND v.model = ? AND v.chunk_id = c.id) ORDER BY c.id LIMIT ?",
            (workspace_id, model, limit),
        )
        return [(int(r["id"]), str(r["content"])) for r in rows]

    def put_vectors(
        self, workspace_id: str, model: str, ids: Sequence[int], vectors: FloatMatrix
    ) -> None:
        if not len(ids):
            return
        with self._db.atomic() as conn:
            self._insert_vectors(conn, workspace_id, model, list(ids), vectors)
            self._bump(conn, workspace_id, 0)

    # -- helpers for the backends' writes ----------------------------------------------------

    @staticmethod
    def _delete_chunks(conn: SqlConnection, workspace_id: str, path: str) -> int:
        cursor = conn.execute(
            "DELETE FROM chunks WHERE workspace_id = ? AND path = ?", (workspace_id, path)
        )
        return max(int(cursor.rowcount), 0)

    @staticmethod
    def _bump(conn: SqlConnection, workspace_id: str, delta: int) -> None:
        conn.execute(
            "UPDATE chunk_workspaces SET generation = generation + 1, "
            "chunk_count = chunk_count + ?, indexed_at = ? WHERE workspace_id = ?",
            (delta, datetime.now(UTC).isoformat(timespec="seconds"), workspace_id),
        )

    @staticmethod
    def _upsert_file(conn: SqlConnection, workspace_id: str, state: FileState) -> None:
        conn.execute(UPSERT_FILE, file_row(workspace_id, state))


UPSERT_FILE = (
    "INSERT INTO chunk_files(workspace_id, path, size, mtime_ns, file_hash, indexed_ns) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(workspace_id, path) DO UPDATE SET "
    "size = excluded.size, mtime_ns = excluded.mtime_ns, file_hash = excluded.file_hash, "
    "indexed_ns = excluded.indexed_ns"
)


def file_row(workspace_id: str, state: FileState) -> tuple[str, str, int, int, str, int]:
    """``UPSERT_FILE``'s parameters for one file."""
    return (
        workspace_id,
        state.path,
        state.size,
        state.mtime_ns,
        state.file_hash,
        state.indexed_ns,
    )
