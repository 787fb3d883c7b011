"""The pgvector HNSW index of a big workspace's chunk vectors (``IndexedVectors``).

One partial index per (workspace, model, size): ``WHERE workspace_id = ... AND model = ... AND
dims = ...`` over ``embedding::halfvec(dims)`` (an HNSW index needs a fixed size), so a search of
that workspace walks a graph of its own vectors only (no filter for the walk to skip, and
other workspaces' writes never pay for it), with ``halfvec_ip_ops``: vectors are unit length, so
the inner product is the cosine the in-memory matrix computes. Each walk keeps as many candidates
as the scope's size needs (``ef_search_for``, set on the connection only when it changes). The
graph holds half-precision copies (about half the pages of ``vector``'s, so a big workspace's
index stays in the server's cache, with the same recall in ``bench/hybrid_scale.py``); the cosines
returned are the stored vectors' exact ones. The ranker asks for it once a
workspace reaches ``SearchOptions.ann_min_rows`` vectors, and it is built then, over the rows
already there (many times faster than growing the graph row by row during a bulk index), with
``CREATE INDEX CONCURRENTLY`` so writers are not blocked; later writes keep it up to date. Built
indexes are listed in ``chunk_vector_indexes`` (migration ``0420_chunk_vector_indexes``), which
``vector_index`` reads with the index's validity. Model and workspace are literals in the SQL
(``psycopg.sql``), so the planner matches the partial index.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from kairox.store.postgres.db import LOCK_VECTOR_INDEX, PgDatabase, translate
from kairox.store.postgres.vectors import VectorParam
from kairox.store.records import StoreVectorIndex
from kairox.store.vectors import FloatMatrix, IdArray

# The graph's links per node and build breadth, as ``kairox.retrieval.ann``'s graph. M=16 capped
# pgvector's recall too: at 300k rows the hybrid's recall@10 was 0.963 at ef_search 100 and 0.987
# at 200, where M=32 gives 0.994 at 100 for about the walk time of M=16 at 200 (11.2 against
# 11.6 ms, same load; docs/benchmarks.md), and at 1M 0.995 at 200. Part of the index's name: a
# graph of other parameters is built again, then dropped.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
# Memory for one build: while the graph fits, the build is many times faster (the server's 64 MB
# default holds ~40k 384-d vectors; 1M of them take about 2 GB). Only what the graph needs is
# taken, for that build's session.
HNSW_BUILD_MEMORY = "3GB"
# The graph's element type: half precision (pgvector >= 0.7), cast from the stored ``vector``.
HNSW_KIND = "halfvec"
# The candidates a walk keeps (``hnsw.ef_search``) by the scope's row count: (up to rows,
# ef_search). A bigger graph needs more for the same recall, and each costs time, so a small scope
# does not pay a big one's setting. Measured with M=32 (``bench/hybrid_scale.py``, the hybrid's
# recall@10 against SQLite's exact hybrid; docs/benchmarks.md): 100 gives 1.000 at 100k and 0.994
# at 300k (vector side alone 0.986); at 1M 100 gives 0.992 but the vector side alone 0.962, 200
# gives 0.995 and 0.983. On a second set of queries the vector side alone was 0.971 (300k, 100)
# and 0.978 (1M, 200): a few walks (1.5-2.5%) find none of their top 10 until 400, which costs 1.47x
# SQLite's hybrid at 1M against 1.08x at 200. Never below the rows asked (the hybrid asks 100).
# Beyond the largest size measured it grows with the square root of the rows (not measured).
EF_SEARCH_SCHEDULE = ((450_000, 100), (1_000_000, 200))


def ef_search_for(rows: int, depth: int) -> int:
    """``hnsw.ef_search`` for a walk of a scope of ``rows`` rows asked for ``depth`` of them
    (never fewer than asked: the walk would scan on iteratively for the rest)."""
    for most, ef in EF_SEARCH_SCHEDULE:
        if rows <= most:
            return max(ef, depth)
    most, ef = EF_SEARCH_SCHEDULE[-1]
    return max(math.ceil(ef * math.sqrt(rows / most)), depth)


def index_name(workspace_id: str, model: str, dims: int) -> str:
    key = f"{workspace_id}\0{model}\0{dims}\0{HNSW_KIND}\0{HNSW_M}\0{HNSW_EF_CONSTRUCTION}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:24]
    return f"chunk_vectors_ann_{digest}"


def _scope(workspace_id: str, model: str, dims: int) -> sql.Composed:
    return sql.SQL("workspace_id = {} AND model = {} AND dims = {}").format(
        sql.Literal(workspace_id), sql.Literal(model), sql.Literal(int(dims))
    )


class ChunkVectorIndexes:
    """``IndexedVectors`` for ``PostgresChunkStore``."""

    _db: PgDatabase
    # (workspace, model) -> the scope's row count when ``vector_index`` last read it (the
    # ranker asks once per generation): the walks' ``hnsw.ef_search`` follows it.
    _scope_rows: dict[tuple[str, str], int]

    def vector_index(self, workspace_id: str, model: str) -> StoreVectorIndex:
        row = self._db.query_one(
            "SELECT w.chunk_count, x.dims, x.name, i.indisvalid AS valid FROM chunk_workspaces w "
            "LEFT JOIN chunk_vector_indexes x ON x.workspace_id = w.workspace_id AND x.model = ? "
            "LEFT JOIN pg_index i ON i.indexrelid = to_regclass(x.name) "
            "WHERE w.workspace_id = ?",
            (model, workspace_id),
        )
        if row is None:
            return StoreVectorIndex(None, 0)
        dims = int(row["dims"]) if row["valid"] else None
        if dims is not None and row["name"] != index_name(workspace_id, model, dims):
            dims = None  # an index of before (other parameters): built again, then dropped
        rows = int(row["chunk_count"])
        self._scope_rows[(workspace_id, model)] = rows
        return StoreVectorIndex(dims, rows)

    def build_vector_index(self, workspace_id: str, model: str) -> int | None:
        newest = self._db.query_one(
            "SELECT dims FROM chunk_vectors WHERE workspace_id = ? AND model = ? "
            "ORDER BY chunk_id DESC LIMIT 1",
            (workspace_id, model),
        )
        if newest is None:
            return None
        dims = int(newest["dims"])
        name = index_name(workspace_id, model, dims)
        key = int.from_bytes(hashlib.sha1(name.encode()).digest()[:4], "big", signed=True)
        create = sql.SQL(
            "CREATE INDEX CONCURRENTLY {name} ON chunk_vectors USING hnsw "
            "((embedding::{cast}) {ops}) WITH (m = {m}, ef_construction = {ef}) WHERE {scope}"
        ).format(
            name=sql.Identifier(name),
            cast=_cast(dims, HNSW_KIND),
            ops=sql.SQL(f"{HNSW_KIND}_ip_ops"),
            m=sql.Literal(HNSW_M),
            ef=sql.Literal(HNSW_EF_CONSTRUCTION),
            scope=_scope(workspace_id, model, dims),
        )
        drop = sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}")
        try:
            # Autocommit (the pool's connections are): CONCURRENTLY runs outside a transaction.
            with self._db.pool.connection() as raw:
                # One builder per index across processes; the others wait, then find it built.
                raw.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_VECTOR_INDEX, key))
                try:
                    old = raw.execute(
                        "SELECT name FROM chunk_vector_indexes "
                        "WHERE workspace_id = %s AND model = %s",
                        (workspace_id, model),
                    ).fetchone()
                    found = raw.execute(
                        "SELECT indisvalid AS valid FROM pg_index "
                        "WHERE indexrelid = to_regclass(%s)",
                        (name,),
                    ).fetchone()
                    if found is None or not found["valid"]:
                        raw.execute(drop.format(sql.Identifier(name)))  # a failed build's
                        raw.execute(f"SET maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
                        raw.execute(create)
                    raw.execute(
                        "INSERT INTO chunk_vector_indexes(workspace_id, model, dims, name) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT (workspace_id, model) "
                        "DO UPDATE SET dims = excluded.dims, name = excluded.name",
                        (workspace_id, model, int(dims), name),
                    )
                    if old is not None and old["name"] != name:  # resized, or other parameters
                        raw.execute(drop.format(sql.Identifier(old["name"])))
                finally:
                    raw.execute("RESET maintenance_work_mem")
                    raw.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_VECTOR_INDEX, key))
        except psycopg.Error as exc:
            raise translate(exc, self._db.url) from exc
        return dims

    def nearest_vectors(
        self, workspace_id: str, model: str, vector: FloatMatrix, depth: int
    ) -> list[tuple[int, float]]:
        """The walk, with the ``hnsw.ef_search`` of the scope's size (``ef_search_for``)."""
        scope_rows = self._scope_rows.get((workspace_id, model))
        if scope_rows is None:
            scope_rows = self.vector_index(workspace_id, model).rows
        ef_search = ef_search_for(scope_rows, depth)
        rows = self._run(nearest_statement(workspace_id, model, vector, depth), ef_search)
        # <#> is the negated inner product; relaxed iterative scans may return rows a little
        # out of order, so they are sorted here.
        return sorted(((int(r["chunk_id"]), -float(r["d"])) for r in rows), key=lambda h: -h[1])

    def vector_cosines(
        self, workspace_id: str, model: str, vector: FloatMatrix, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix]:
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        rows = self._run(cosines_statement(workspace_id, model, vector, ids))
        found = sorted((int(r["chunk_id"]), -float(r["d"])) for r in rows)
        return (
            np.asarray([i for i, _ in found], dtype=np.int64),
            np.asarray([c for _, c in found], dtype=np.float32),
        )

    def _run(
        self, statement: tuple[sql.Composed, dict[str, object]], ef_search: int | None = None
    ) -> list[dict[str, Any]]:
        try:
            with self._db.read() as conn:
                if ef_search is not None:
                    self._db.use_setting(conn, "hnsw.ef_search", str(ef_search))
                # Never prepared: each query's vector differs, and a generic plan (an unknown
                # LIMIT) may sort the whole workspace instead of walking the index.
                return conn.raw.execute(*statement, prepare=False).fetchall()
        except psycopg.Error as exc:
            raise translate(exc, self._db.url) from exc


def _cast(dims: int, kind: str = "vector") -> sql.Composed:
    return sql.SQL("{}({})").format(sql.SQL(kind), sql.Literal(dims))


def nearest_statement(
    workspace_id: str, model: str, vector: FloatMatrix, depth: int
) -> tuple[sql.Composed, dict[str, object]]:
    """``nearest_vectors``'s statement: the HNSW walk (the ORDER BY is the index's expression
    and operator, the WHERE its predicate, both literal); the rows' exact cosines selected."""
    dims = int(vector.shape[0])
    statement = sql.SQL(
        "SELECT chunk_id, (embedding::{cast}) <#> %(q)s::{cast} AS d FROM chunk_vectors "
        "WHERE {scope} ORDER BY (embedding::{kind}) <#> (%(q)s::{cast})::{kind} LIMIT {depth}"
    ).format(
        cast=_cast(dims),
        kind=_cast(dims, HNSW_KIND),
        scope=_scope(workspace_id, model, dims),
        depth=sql.Literal(int(depth)),
    )
    return statement, {"q": VectorParam(vector)}


def cosines_statement(
    workspace_id: str, model: str, vector: FloatMatrix, ids: Sequence[int]
) -> tuple[sql.Composed, dict[str, object]]:
    """``vector_cosines``'s statement: the rows by primary key."""
    dims = int(vector.shape[0])
    statement = sql.SQL(
        "SELECT chunk_id, (embedding::{cast}) <#> %(q)s::{cast} AS d FROM chunk_vectors "
        "WHERE workspace_id = %(ws)s AND model = %(model)s AND chunk_id = ANY(%(ids)s) "
        "AND dims = %(dims)s"
    ).format(cast=_cast(dims))
    params: dict[str, object] = {
        "q": VectorParam(vector),
        "ws": workspace_id,
        "model": model,
        "ids": sorted(set(ids)),
        "dims": dims,
    }
    return statement, params
