"""Where workspace chunks live: the ``ChunkStore`` protocol and its SQLite implementation.

The indexer writes through it and the hybrid searcher reads through it, so another backend (such
as Postgres) only has to implement this protocol. Every method takes the ``workspace_id``
explicitly; nothing reads across workspaces except global FTS term statistics.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kairox.retrieval.chunking import Chunk
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.store.db import Database

IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index knows about a file; ``indexed_ns`` is when it was last checked."""

    path: str
    size: int
    mtime_ns: int
    file_hash: str
    indexed_ns: int


@dataclass(frozen=True, slots=True)
class FileUpdate:
    """A file's new chunks; ``vectors`` (one row per chunk, or None) belong to ``model``."""

    state: FileState
    chunks: tuple[Chunk, ...]
    vectors: FloatMatrix | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    workspace_id: str
    path: str
    ord: int
    start_line: int
    end_line: int
    text: str
    chunk_hash: str


class RankStore(Protocol):
    """What hybrid ranking reads: a keyword index, vectors and versions, per scope."""

    def generation(self, workspace_id: str) -> int: ...
    def corpus_state(self) -> tuple[int, int]: ...
    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]: ...
    def keyword_search(
        self, workspace_id: str, match: str, *, limit: int
    ) -> list[tuple[int, float]]: ...
    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]: ...


class ChunkStore(RankStore, Protocol):
    """Persistence of files, chunks, keyword index and vectors for workspace retrieval."""

    def ensure_workspace(self, workspace_id: str, root: str) -> None: ...
    def chunker(self, workspace_id: str) -> str: ...
    def set_chunker(self, workspace_id: str, signature: str) -> None: ...
    def generation(self, workspace_id: str) -> int: ...
    def chunk_count(self, workspace_id: str) -> int: ...
    def corpus_state(self) -> tuple[int, int]: ...
    def file_states(self, workspace_id: str) -> dict[str, FileState]: ...
    def write_files(
        self, workspace_id: str, updates: Sequence[FileUpdate], *, model: str | None
    ) -> int: ...
    def touch_files(self, workspace_id: str, states: Sequence[FileState]) -> None: ...
    def delete_files(self, workspace_id: str, paths: Sequence[str]) -> int: ...
    def vectors_by_hash(
        self, workspace_id: str, paths: Sequence[str], model: str
    ) -> dict[str, bytes]: ...
    def count_missing_vectors(self, workspace_id: str, model: str) -> int: ...
    def chunks_missing_vectors(
        self, workspace_id: str, model: str, *, limit: int
    ) -> list[tuple[int, str]]: ...
    def put_vectors(
        self, workspace_id: str, model: str, ids: Sequence[int], vectors: FloatMatrix
    ) -> None: ...
    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]: ...
    def keyword_search(
        self, workspace_id: str, match: str, *, limit: int
    ) -> list[tuple[int, float]]: ...
    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]: ...
    def get_chunks(self, workspace_id: str, ids: Sequence[int]) -> list[StoredChunk]: ...


class SqliteChunkStore:
    """``ChunkStore`` on the home database (schema: ``kairox.store.schema.chunks``)."""

    def __init__(self, db: Database, *, path_weight: float = 0.5) -> None:
        self._db = db
        self._path_weight = path_weight

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
        return str(row[0]) if row else ""

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
        return int(row[0]) if row else -1

    def chunk_count(self, workspace_id: str) -> int:
        row = self._db.query_one(
            "SELECT chunk_count FROM chunk_workspaces WHERE workspace_id = ?", (workspace_id,)
        )
        return int(row[0]) if row else 0

    def corpus_state(self) -> tuple[int, int]:
        """(chunks in all workspaces, a number that changes whenever any workspace changes)."""
        row = self._db.query_one(
            "SELECT coalesce(sum(chunk_count), 0), coalesce(sum(generation), 0), count(*) "
            "FROM chunk_workspaces"
        )
        if row is None:
            return 0, 0
        return int(row[0]), int(row[1]) * 1_000_003 + int(row[2])

    def file_states(self, workspace_id: str) -> dict[str, FileState]:
        rows = self._db.query(
            "SELECT path, size, mtime_ns, file_hash, indexed_ns FROM chunk_files "
            "WHERE workspace_id = ?",
            (workspace_id,),
        )
        return {r[0]: FileState(r[0], r[1], r[2], r[3], r[4]) for r in rows}

    def write_files(
        self, workspace_id: str, updates: Sequence[FileUpdate], *, model: str | None
    ) -> int:
        """Replace each file's chunks (FTS rows and vectors follow); returns chunks written."""
        written = 0
        with self._db.atomic() as conn:
            removed = 0
            for update in updates:
                removed += self._delete_chunks(conn, workspace_id, update.state.path)
                _upsert_file(conn, workspace_id, update.state)
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
                written += len(ids)
                if model is not None and update.vectors is not None and ids:
                    _insert_vectors(conn, workspace_id, model, ids, update.vectors)
            self._bump(conn, workspace_id, written - removed)
        return written

    def touch_files(self, workspace_id: str, states: Sequence[FileState]) -> None:
        if not states:
            return
        with self._db.atomic() as conn:
            for state in states:
                _upsert_file(conn, workspace_id, state)

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

    def count_missing_vectors(self, workspace_id: str, model: str) -> int:
        row = self._db.query_one(
            "SELECT count(*) FROM chunks c WHERE c.workspace_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM chunk_vectors v WHERE v.workspace_id = c.workspace_id "
            "AND v.model = ? AND v.chunk_id = c.id)",
            (workspace_id, model),
        )
        return int(row[0]) if row else 0

    def chunks_missing_vectors(
        self, workspace_id: str, model: str, *, limit: int
    ) -> list[tuple[int, str]]:
        rows = self._db.query(
            "SELECT c.id, c.content FROM chunks c WHERE c.workspace_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM chunk_vectors v WHERE v.workspace_id = c.workspace_id "
            "AND v.model = ? AND v.chunk_id = c.id) ORDER BY c.id LIMIT ?",
            (workspace_id, model, limit),
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def put_vectors(
        self, workspace_id: str, model: str, ids: Sequence[int], vectors: FloatMatrix
    ) -> None:
        if not len(ids):
            return
        with self._db.atomic() as conn:
            _insert_vectors(conn, workspace_id, model, list(ids), vectors)
            self._bump(conn, workspace_id, 0)

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
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[2] for r in rows)
        matrix = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dims)
        return ids, matrix

    def keyword_search(
        self, workspace_id: str, match: str, *, limit: int
    ) -> list[tuple[int, float]]:
        """BM25 top ``limit`` for an FTS5 MATCH expression; higher score is better."""
        rows = self._db.query(
            "SELECT c.id, bm25(chunks_fts, ?, 1.0) AS s FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid "
            "WHERE chunks_fts MATCH ? AND c.workspace_id = ? ORDER BY s LIMIT ?",
            (self._path_weight, match, workspace_id, limit),
        )
        return [(int(r[0]), -float(r[1])) for r in rows]

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks (in all workspaces) hold each already-tokenised FTS term."""
        counts: dict[str, int] = {}
        for term in dict.fromkeys(terms):
            row = self._db.query_one("SELECT doc FROM chunks_fts_vocab WHERE term = ?", (term,))
            counts[term] = int(row[0]) if row else 0
        return counts

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

    @staticmethod
    def _delete_chunks(conn: sqlite3.Connection, workspace_id: str, path: str) -> int:
        cursor = conn.execute(
            "DELETE FROM chunks WHERE workspace_id = ? AND path = ?", (workspace_id, path)
        )
        return max(cursor.rowcount, 0)

    @staticmethod
    def _bump(conn: sqlite3.Connection, workspace_id: str, delta: int) -> None:
        conn.execute(
            "UPDATE chunk_workspaces SET generation = generation + 1, "
            "chunk_count = chunk_count + ?, indexed_at = ? WHERE workspace_id = ?",
            (delta, datetime.now(UTC).isoformat(timespec="seconds"), workspace_id),
        )


def _upsert_file(conn: sqlite3.Connection, workspace_id: str, state: FileState) -> None:
    conn.execute(
        "INSERT INTO chunk_files(workspace_id, path, size, mtime_ns, file_hash, indexed_ns) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(workspace_id, path) DO UPDATE SET "
        "size = excluded.size, mtime_ns = excluded.mtime_ns, file_hash = excluded.file_hash, "
        "indexed_ns = excluded.indexed_ns",
        (workspace_id, state.path, state.size, state.mtime_ns, state.file_hash, state.indexed_ns),
    )


def _insert_vectors(
    conn: sqlite3.Connection, workspace_id: str, model: str, ids: list[int], vectors: FloatMatrix
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
