"""Hybrid search at scale: exact vector scan vs the HNSW index (``retrieval.ann``), SQLite/Postgres.

For each size (default 100k; ``--sizes 1000000`` for the 1M row, which takes many minutes): chunks
of ~60 Zipf pseudo-words (``bench/retrieval_speed.py``'s vocabulary) with 384-d vectors of low
intrinsic dimension (``bench/ann_speed.py``'s generator), queries of 3-8 words whose vector lies
near a stored one. Printed per store: build s, the HNSW build (``build_vector_index``, after the
matrix and keyword index are loaded; a long-lived process builds it in the background), hybrid
min-max p50/p95 with the exact scan (the baseline, ``ann_min_rows`` out of reach) and with the index
(``ann_min_rows=0``), queries interleaved, the top-10 recall of the ANN hybrid against the exact
hybrid, and the process's peak RSS. Target: p50 <= 20 ms at 1M on SQLite, recall@10 >= 0.98,
Postgres <= 1.5x SQLite.
Run: ``nice .venv/bin/python bench/hybrid_scale.py [--sizes 100000] [--postgres]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from ann_speed import corpus, peak_mb
from kairox.retrieval.chunking import Chunk, chunk_hash
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.search import HybridSearcher
from kairox.store.protocols import ChunkStore
from kairox.store.records import FileState, FileUpdate
from retrieval_speed import Vocabulary

DIMS = 384
MODEL = "bench-ann:384"


class QueryVectors:
    """Each bench query's vector, given beforehand (queries near stored vectors)."""

    def __init__(self, vectors: dict[str, FloatMatrix]) -> None:
        self.vectors = vectors

    @property
    def model_id(self) -> str:
        return MODEL

    @property
    def dimensions(self) -> int:
        return DIMS

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return np.vstack([self.vectors[t] for t in texts]).astype(np.float32)


def fill(store: ChunkStore, rows: FloatMatrix, vocab: Vocabulary) -> str:
    ws = "ws_scale"
    store.ensure_workspace(ws, "/bench")
    per_file, batch = 10, 5000
    for start in range(0, len(rows), batch):
        count = min(batch, len(rows) - start)
        texts = vocab.texts(count, 60)
        updates = []
        for f in range(0, count, per_file):
            body = texts[f : f + per_file]
            parts = tuple(Chunk(i, i + 1, i + 5, t, chunk_hash(t)) for i, t in enumerate(body))
            path = f"src/f{(start + f) // per_file:07d}.py"
            state = FileState(path, 0, 0, chunk_hash(path), 0)
            vectors = rows[start + f : start + f + len(body)]
            updates.append(FileUpdate(state, parts, vectors))
        store.write_files(ws, updates, model=MODEL)
    return ws


def measure(name: str, store: ChunkStore, ws: str, embedder: QueryVectors, queries: list[str],
            build: float) -> float:  # fmt: skip
    exact = HybridSearcher(store, embedder, SearchOptions(ann_min_rows=1 << 62))
    approx = HybridSearcher(store, embedder, SearchOptions(ann_min_rows=0))
    exact.search(ws, queries[0], k=10, fusion=FusionMethod.MINMAX)  # keyword index + matrix
    approx.keyword(ws, "warm", 1)
    approx.matrix(ws)
    started = time.perf_counter()
    approx.build_vector_index(ws)  # what a long-lived process builds in the background
    ann_build = time.perf_counter() - started
    exact_ms: list[float] = []
    ann_ms: list[float] = []
    found = 0
    for text in queries:
        begun = time.perf_counter()
        want = exact.search(ws, text, k=10, fusion=FusionMethod.MINMAX)
        exact_ms.append((time.perf_counter() - begun) * 1000)
        begun = time.perf_counter()
        got = approx.search(ws, text, k=10, fusion=FusionMethod.MINMAX)
        ann_ms.append((time.perf_counter() - begun) * 1000)
        found += len({h.chunk_id for h in want} & {h.chunk_id for h in got})
    e50, a50 = statistics.median(exact_ms), statistics.median(ann_ms)
    a95 = sorted(ann_ms)[int(0.95 * len(ann_ms))]
    print(f"| {name} | {build:.0f} | {ann_build:.1f} | {e50:.1f} | {a50:.1f} | {a95:.1f} | "
          f"{e50 / a50:.1f}x | {found / (10 * len(queries)):.3f} | {peak_mb():.0f} |")  # fmt: skip
    exact.close()
    approx.close()
    return a50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    from kairox.store.chunks_sqlite import SqliteChunkStore
    from kairox.store.db import Database

    server = None
    if args.postgres:
        from kairox.testing.postgres import EmbeddedPostgres

        server = EmbeddedPostgres.start()
    print(f"## Hybrid search at scale: exact scan vs HNSW ({args.queries} queries, min-max, "
          "top-10; figures under load are only comparable as ratios within a row)")  # fmt: skip
    print(
        "| store, chunks | build s | HNSW build s | exact hybrid p50 ms | "
        "ANN hybrid p50 ms | ANN p95 ms | exact / ANN | recall@10 vs exact | peak RSS MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            rows, asked = corpus(size, args.queries)
            vocab = Vocabulary()
            rng = np.random.default_rng(3)
            queries = [
                " ".join(vocab.words[i] for i in rng.choice(len(vocab.words), n, p=vocab.p))
                + f" q{j}"
                for j, n in enumerate(rng.integers(3, 9, size=args.queries))
            ]
            embedder = QueryVectors(dict(zip(queries, asked, strict=True)))
            with tempfile.TemporaryDirectory(prefix="kairox-bench-scale-") as tmp:
                db = Database.open(Path(tmp) / "scale.db")
                started = time.perf_counter()
                ws = fill(SqliteChunkStore(db), rows, Vocabulary())
                built = time.perf_counter() - started
                lite = measure(f"SQLite, {size:,}", SqliteChunkStore(db), ws, embedder, queries,
                               built)  # fmt: skip
                db.close()
            if server is not None:
                from kairox.store.postgres.chunks import PostgresChunkStore
                from kairox.store.postgres.db import PgDatabase
                from kairox.store.postgres.schema import MIGRATIONS

                pg_db = PgDatabase.open(server.fresh_database(), MIGRATIONS)
                started = time.perf_counter()
                ws = fill(PostgresChunkStore(pg_db), rows, Vocabulary())
                built = time.perf_counter() - started
                pg = measure(f"Postgres, {size:,}", PostgresChunkStore(pg_db), ws, embedder,
                             queries, built)  # fmt: skip
                pg_db.close()
                print(f"Postgres / SQLite ANN hybrid p50 at {size:,}: {pg / lite:.2f}x "
                      "(target <= 1.5x)")  # fmt: skip
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
