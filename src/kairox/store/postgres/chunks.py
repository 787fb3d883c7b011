"""``ChunkStore`` on Postgres: ``tsvector`` + GIN for keywords, pgvector HNSW for vectors.

A search is one statement (``hybrid_candidates``): the ranked full-text top-k, the HNSW top-k
and the chunks' text come back in one round trip, and the searcher fuses them as it does for
SQLite. An HNSW index needs a fixed dimension, so one partial index per (model, dims) is built the
first time that model is searched (building over existing rows is far faster than growing the
graph row by row during a bulk index); later writes keep it up to date. Workspaces, file states
and deletes are the shared SQL of ``kairox.store.chunks_sql.SqlChunkStore``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import sql

from kairox.store.chunks import (
    FileUpdate,
    FloatMatrix,
    IdArray,
    NativeHit,
    StoredChunk,
)
from kairox.store.chunks_sql import SqlChunkStore
from kairox.store.postgres.db import PgConnection, PgDatabase

# From this many chunks on, frequent words' document counts are the planner's estimates.
ESTIMATE_FROM = 20_000
# Memory for building an HNSW index (one build at a time, released when it ends).
HNSW_BUILD_MEMORY = "1GB"
# ts_rank weights for {D, C, B, A}: content is B (1.0), the path is A (``path_weight``).
_CHUNK_COLUMNS = (
    "c.id, c.workspace_id, c.path, c.ord, c.start_line, c.end_line, c.content, c.chunk_hash"
)


def vector_literal(row: Sequence[float] | FloatMatrix) -> str:
    """pgvector's text form of one vector."""
    return "[" + ",".join(repr(float(x)) for x in row) + "]"


class PostgresChunkStore(SqlChunkStore):
    """``ChunkStore`` and ``NativeHybridSearch`` on a ``PgDatabase``."""

    _db: PgDatabase

    def __init__(
        self, db: PgDatabase, *, path_weight: float = 0.5, estimate_from: int = ESTIMATE_FROM
    ) -> None:
        super().__init__(db)
        self._estimate_from = estimate_from
        self._weights = f"{{0.1, 0.2, 1.0, {path_weight}}}"
        self._indexed: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

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
        rows = [r for r in rows if int(r["dims"]) == dims]
        ids = np.fromiter((r["chunk_id"] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.asarray([r["e"] for r in rows], dtype=np.float32).reshape(len(rows), dims)
        return ids, matrix

    def keyword_search(
        self, workspace_id: str, match: str, *, limit: int
    ) -> list[tuple[int, float]]:
        """Ranked full-text top ``limit`` for ``match`` (words ORed); higher is better."""
        terms = [t.strip('"') for t in match.split(" OR ") if t.strip('"')]
        rows = self._db.query(
            "SELECT c.id, ts_rank(?::real[], c.tsv, q) AS s FROM chunks c,"
            " to_tsquery('english', ?) q WHERE c.workspace_id = ? AND c.tsv @@ q"
            " ORDER BY s DESC, c.id LIMIT ?",
            (self._weights, _tsquery(terms), workspace_id, limit),
        )
        return [(int(r["id"]), float(r["s"])) for r in rows]

    def document_frequencies(self, scope: str, terms: Sequence[str]) -> dict[str, int]:
        wanted = {term: _tsquery([term]) for term in dict.fromkeys(terms)}
        queries = [q for q in wanted.values() if q]
        if not queries:
            return dict.fromkeys(wanted, 0)
        # One round trip for every term. An exact count visits every matching heap row, which
        # on a big table costs more than the search itself; from ``ESTIMATE_FROM`` chunks on, a
        # frequent word's count comes from the planner's statistics (its lexeme's share of the
        # sampled rows, refreshed by ANALYZE) and only the rarer words, cheap to count, are. The
        # planner's statistics cover the table, so they stand in only when no other workspace
        # has chunks; otherwise every count is the workspace's own.
        rows = self._db.query(
            "WITH st AS (SELECT s.most_common_elems::text::text[] AS e,"
            "  s.most_common_elem_freqs AS f, greatest(c.reltuples, 0) AS n"
            "  FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename"
            "  AND c.relnamespace = to_regnamespace(s.schemaname)"
            "  WHERE s.schemaname = current_schema() AND s.tablename = 'chunks'"
            "  AND s.attname = 'tsv'),"
            " t AS (SELECT q, btrim(to_tsquery('english', q)::text, '''') AS lex"
            "  FROM unnest(?::text[]) AS q)"
            " SELECT t.q, CASE WHEN ? AND st.n >= ? AND array_position(st.e, t.lex) IS NOT NULL"
            "  THEN round(st.f[array_position(st.e, t.lex)] * st.n)"
            "  ELSE (SELECT count(*) FROM chunks WHERE workspace_id = ?"
            "   AND tsv @@ to_tsquery('english', t.q)) END AS n"
            " FROM t LEFT JOIN st ON true",
            (queries, self._holds_every_chunk(scope), self._estimate_from, scope),
        )
        found = {str(r["q"]): int(r["n"]) for r in rows}
        return {term: found.get(q, 0) for term, q in wanted.items()}

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

    # -- NativeHybridSearch -----------------------------------------------------------------

    def hybrid_candidates(
        self,
        workspace_id: str,
        terms: Sequence[str],
        vector: FloatMatrix | None,
        model: str,
        *,
        limit: int,
    ) -> list[NativeHit]:
        """Keyword top ``limit`` and HNSW top ``limit`` (union) with their chunks, one statement."""
        query = _tsquery(terms)
        if vector is None or vector.shape[0] == 0:
            rows = self._db.query(
                f"SELECT {_CHUNK_COLUMNS}, ts_rank(?::real[], c.tsv, q) AS kw, NULL AS cos"
                " FROM chunks c, to_tsquery('english', ?) q"
                " WHERE c.workspace_id = ? AND c.tsv @@ q ORDER BY kw DESC, c.id LIMIT ?",
                (self._weights, query, workspace_id, limit),
            )
            return [NativeHit(_chunk(r), float(r["kw"]), None) for r in rows]
        dims = int(vector.shape[0])
        self._ensure_hnsw(model, dims)
        cast = f"vector({dims})"
        # Model and size are literals, so the planner can match the partial HNSW index.
        vec_filter = f"model = {_literal(model)} AND v.dims = {dims}"
        row_filter = f"model = {_literal(model)} AND w.dims = {dims}"
        statement = (
            "WITH kw AS (SELECT c.id, ts_rank(?::real[], c.tsv, to_tsquery('english', ?)) AS s"
            "  FROM chunks c WHERE ? <> '' AND c.workspace_id = ?"
            "  AND c.tsv @@ to_tsquery('english', ?) ORDER BY s DESC, c.id LIMIT ?),"
            f" vec AS (SELECT v.chunk_id AS id, v.embedding::{cast} <=> ?::{cast} AS d"
            f"  FROM chunk_vectors v WHERE v.{vec_filter}"
            f"  AND v.workspace_id = ? ORDER BY v.embedding::{cast} <=> ?::{cast} LIMIT ?),"
            " ids AS (SELECT id FROM kw UNION SELECT id FROM vec)"
            f" SELECT {_CHUNK_COLUMNS}, kw.s AS kw,"
            f"  1 - COALESCE(vec.d, (SELECT w.embedding::{cast} <=> ?::{cast}"
            f"   FROM chunk_vectors w WHERE w.chunk_id = c.id AND w.{row_filter}"
            "   AND w.workspace_id = c.workspace_id)) AS cos"
            " FROM ids JOIN chunks c ON c.id = ids.id"
            " LEFT JOIN kw ON kw.id = c.id LEFT JOIN vec ON vec.id = c.id"
        )
        literal = vector_literal(vector)
        rows = self._db.query(
            statement,
            (
                self._weights, query, query, workspace_id, query, limit,
                literal, workspace_id, literal, limit, literal,
            ),
        )  # fmt: skip
        return [
            NativeHit(
                _chunk(r),
                None if r["kw"] is None else float(r["kw"]),
                None if r["cos"] is None else float(r["cos"]),
            )
            for r in rows
        ]

    def _ensure_hnsw(self, model: str, dims: int) -> None:
        """Build the (model, dims) HNSW index once; ``IF NOT EXISTS`` makes processes agree."""
        with self._lock:
            if (model, dims) in self._indexed:
                return
        name = "chunk_vectors_hnsw_" + hashlib.sha1(f"{model}:{dims}".encode()).hexdigest()[:12]
        ddl = sql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON chunk_vectors USING hnsw "
            "((embedding::vector({dims})) vector_cosine_ops) WHERE model = {model} AND dims = {d}"
        ).format(
            name=sql.Identifier(name),
            dims=sql.SQL(str(int(dims))),
            model=sql.Literal(model),
            d=sql.Literal(int(dims)),
        )
        # The build is many times faster while the graph fits in maintenance_work_mem (the
        # server's 64 MB default holds ~40k 384-d vectors); the setting lasts for this build.
        with self._db.pool.connection() as raw, raw.transaction():
            raw.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
            raw.execute(ddl)
        with self._lock:
            self._indexed.add((model, dims))


def _literal(text: str) -> str:
    """A SQL string literal (standard_conforming_strings is on since Postgres 9.1)."""
    return "'" + text.replace("'", "''") + "'"


def _tsquery(terms: Sequence[str]) -> str:
    """The words ORed as a ``to_tsquery`` string; words are plain (``[^\\W_]+``), so safe."""
    words = ["".join(ch for ch in t if ch.isalnum()) for t in terms]
    return " | ".join(w for w in words if w)


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
