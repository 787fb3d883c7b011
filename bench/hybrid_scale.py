"""Hybrid search at scale: exact vector scan vs an approximate index, SQLite and Postgres together.

For each size (default 100k; ``--sizes 100000,1000000`` for the 1M row, which takes many minutes):
chunks of ~60 Zipf pseudo-words (``bench/retrieval_speed.py``'s vocabulary) with 384-d vectors of
low intrinsic dimension (``bench/ann_speed.py``'s generator), queries of 3-8 words whose vector
lies near a stored one. SQLite's approximate index is hnswlib in the process
(``retrieval.ann``); Postgres's (``--postgres``) is the pgvector HNSW index the store keeps
(``store.postgres.chunk_index``), which its searches ask instead of holding the matrix. Printed
per store: fill s (Postgres's batched ``COPY`` writes; SQLite's corpus may come from ``--cache``),
the index build s, hybrid min-max p50/p95 with the exact scan (the baseline, ``ann_min_rows`` out
of reach) and with the index (``ann_min_rows=0``), the top-10 recall of each store's ANN hybrid
against SQLite's exact hybrid, and whether Postgres's plan walks the HNSW index. Every searcher
answers each query in turn (the order rotating query by query), so the Postgres / SQLite ratio is
taken under the same load (an exact search is followed by an untimed pause, ``--settle-ms``, for
its BLAS threads to stop spinning). Postgres walks with the store's ``hnsw.ef_search`` for the
scope's size, or one searcher per ``--pg-ef`` value. ``--pg-url`` uses a server filled before
(e.g. at 1M, whose fill and build take most of an hour). Target: p50 <= 20 ms at 1M on SQLite,
recall@10 >= 0.98, Postgres <= 1.5x SQLite.
Run: ``nice .venv/bin/python bench/hybrid_scale.py [--sizes 100000] [--postgres] [--cache DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from ann_speed import corpus, peak_mb
from kairox.retrieval.chunking import Chunk, chunk_hash
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.search import HybridSearcher, SearchHit
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.protocols import ChunkStore
from kairox.store.records import FileState, FileUpdate
from retrieval_speed import Vocabulary

DIMS = 384
MODEL = "bench-ann:384"
EXACT = SearchOptions(ann_min_rows=1 << 62)
APPROXIMATE = SearchOptions(ann_min_rows=0)


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


def sqlite_corpus(folder: Path, size: int, rows: FloatMatrix) -> tuple[Database, str, float]:
    """The size's SQLite corpus in ``folder``: reused when a finished one is there (``--cache``;
    build s then reads 0), else filled now."""
    folder.mkdir(parents=True, exist_ok=True)
    path, done = folder / f"scale-{size}.db", folder / f"scale-{size}.done"
    if done.exists():
        return Database.open(path), "ws_scale", 0.0
    path.unlink(missing_ok=True)
    db = Database.open(path)
    started = time.perf_counter()
    ws = fill(SqliteChunkStore(db), rows, Vocabulary())
    built = time.perf_counter() - started
    done.write_text(f"{built:.0f}\n")
    return db, ws, built


def vectors(folder: Path | None, size: int, queries: int) -> tuple[FloatMatrix, FloatMatrix]:
    """``ann_speed.corpus``, kept in ``folder`` (``--cache``) for the next run."""
    if folder is None:
        return corpus(size, queries)
    path = folder / f"vectors-{size}-{queries}.npz"
    if path.exists():
        with np.load(path) as saved:
            return saved["rows"], saved["asked"]
    rows, asked = corpus(size, queries)
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(path, rows=rows, asked=asked)
    return rows, asked


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


class Side:
    """One searcher's samples: ms per query and its top 10 of each query."""

    def __init__(
        self, name: str, searcher: HybridSearcher, setup: Callable[[], None] | None = None
    ) -> None:
        self.name = name
        self.searcher = searcher
        self.setup = setup  # run before each query, untimed
        self.ms: list[float] = []
        self.tops: list[list[tuple[str, int]]] = []

    def ask(self, ws: str, text: str) -> None:
        if self.setup is not None:
            self.setup()
        begun = time.perf_counter()
        hits: list[SearchHit] = self.searcher.search(ws, text, k=10, fusion=FusionMethod.MINMAX)
        self.ms.append((time.perf_counter() - begun) * 1000)
        self.tops.append([(h.path, h.start_line) for h in hits])

    def p50(self) -> float:
        return statistics.median(self.ms)

    def p95(self) -> float:
        return sorted(self.ms)[int(0.95 * len(self.ms))]

    def recall(self, exact: Side) -> float:
        found = sum(len(set(a) & set(b)) for a, b in zip(self.tops, exact.tops, strict=True))
        return found / max(1, sum(len(t) for t in exact.tops))


def _ef_search(ef: int) -> Callable[[], None]:
    """Set the Postgres store's ``hnsw.ef_search`` schedule to ``ef`` for every size."""
    from kairox.store.postgres import chunk_index

    def setup() -> None:
        chunk_index.EF_SEARCH_SCHEDULE = ((1 << 62, ef),)

    return setup


def plan_uses_index(store: ChunkStore, ws: str, vector: FloatMatrix) -> str:
    """Postgres's plan of the nearest-vectors statement: the HNSW index it walks, or the plan."""
    from psycopg import sql

    from kairox.store.postgres.chunk_index import index_name, nearest_statement
    from kairox.store.postgres.chunks import PostgresChunkStore

    assert isinstance(store, PostgresChunkStore)
    statement, params = nearest_statement(ws, MODEL, vector, 100)
    with store._db.read() as conn:
        plan = [
            str(r["QUERY PLAN"])
            for r in conn.execute(sql.SQL("EXPLAIN ANALYZE ") + statement, params)
        ]
    name = index_name(ws, MODEL, DIMS)
    if any(name in line for line in plan):
        return f"the HNSW walk is an index scan of {name}"
    nodes = [line.split("(")[0].strip(" ->") for line in plan if "(cost=" in line]
    return "no HNSW index scan: " + " / ".join(nodes)


def run_size(size: int, args: argparse.Namespace, server: object | None) -> None:
    rows, asked = vectors(args.vectors_cache or args.cache, size, args.queries)
    vocab = Vocabulary()
    rng = np.random.default_rng(3)
    queries = [
        " ".join(vocab.words[i] for i in rng.choice(len(vocab.words), n, p=vocab.p)) + f" q{j}"
        for j, n in enumerate(rng.integers(3, 9, size=args.queries))
    ]
    embedder = QueryVectors(dict(zip(queries, asked, strict=True)))
    with tempfile.TemporaryDirectory(prefix="kairox-bench-scale-") as tmp:
        db, ws, lite_fill = sqlite_corpus(args.cache or Path(tmp), size, rows)
        lite = SqliteChunkStore(db)
        sides = [
            Side("SQLite exact", HybridSearcher(lite, embedder, EXACT)),
            Side("SQLite ANN", HybridSearcher(lite, embedder, APPROXIMATE)),
        ]
        sides[0].searcher.search(ws, queries[0], k=10)  # keyword index + matrix
        sides[1].searcher.search(ws, queries[0], k=10)
        builds = {"SQLite": timed(lambda: sides[1].searcher.build_vector_index(ws))}
        fills = {"SQLite": lite_fill}
        pg_db = None
        if server is not None or args.pg_url:
            from kairox.store.postgres.chunk_index import ef_search_for
            from kairox.store.postgres.chunks import PostgresChunkStore
            from kairox.store.postgres.db import PgDatabase
            from kairox.store.postgres.schema import MIGRATIONS
            from kairox.testing.postgres import EmbeddedPostgres

            if args.pg_url:  # filled (and indexed) before: fill s reads 0
                pg_db = PgDatabase.open(args.pg_url, MIGRATIONS)
                pg = PostgresChunkStore(pg_db)
                fills["Postgres"] = 0.0
            else:
                assert isinstance(server, EmbeddedPostgres)
                pg_db = PgDatabase.open(server.fresh_database(), MIGRATIONS)
                pg = PostgresChunkStore(pg_db)
                fills["Postgres"] = timed(lambda: fill(pg, rows, Vocabulary()))
                pg_db.execute("ANALYZE chunk_vectors")
            served = HybridSearcher(pg, embedder, APPROXIMATE)
            builds["Postgres"] = timed(lambda: served.build_served_index(ws))
            served.search(ws, queries[0], k=10)  # keyword index
            if args.pg_ef:  # one side per setting, each setting the schedule for its queries
                for ef in (int(e) for e in args.pg_ef.split(",")):
                    sides.append(Side(f"Postgres ANN ef_search {ef}", served, _ef_search(ef)))
            else:
                sides.append(Side("Postgres ANN", served))
                print(f"Postgres ef_search at {size:,} rows (the store's schedule): "
                      f"{ef_search_for(pg.chunk_count(ws), 100)}")  # fmt: skip
            if size <= args.pg_exact_max:
                pg_exact = HybridSearcher(pg, embedder, EXACT)
                pg_exact.search(ws, queries[0], k=10)  # keyword index + matrix (binary read)
                sides.append(Side("Postgres exact", pg_exact))
            print(f"Postgres plan at {size:,}: {plan_uses_index(pg, ws, asked[0])}")
        load = os.getloadavg()[0]
        for j, text in enumerate(queries):
            for k in range(len(sides)):
                side = sides[(j + k) % len(sides)]
                side.ask(ws, text)
                if side.name.endswith("exact"):
                    # NumPy's BLAS threads spin on the other core for a while after the exact
                    # scan's product; the next searcher would pay for them (Postgres most, whose
                    # walk runs in the server beside the keyword side), which no deployment does.
                    time.sleep(args.settle_ms / 1000)
        load = (load + os.getloadavg()[0]) / 2
        by = {s.name: s for s in sides}
        exact = by["SQLite exact"]
        lite_ann = by["SQLite ANN"]
        for ann in (s for s in sides if " ANN" in s.name):
            store = ann.name.split()[0]
            mine = by.get(f"{store} exact")
            e50 = f"{mine.p50():.1f}" if mine else "-"
            ratio = f"{mine.p50() / ann.p50():.1f}x" if mine else "-"
            label = ann.name.removeprefix(f"{store} ANN").strip()
            print(f"| {store}, {size:,} {label} | {fills[store]:.0f} | {builds[store]:.1f} | "
                  f"{e50} | {ann.p50():.1f} | {ann.p95():.1f} | {ratio} | "
                  f"{ann.recall(exact):.3f} | {load:.1f} |")  # fmt: skip
        for pg_ann in (s for s in sides if s.name.startswith("Postgres ANN")):
            print(f"{pg_ann.name} / SQLite ANN hybrid p50 at {size:,}: "
                  f"{pg_ann.p50() / lite_ann.p50():.2f}x (target <= 1.5x), same run")  # fmt: skip
        if "Postgres exact" in by:
            pg_exact_side = by["Postgres exact"]
            print(f"Postgres / SQLite exact hybrid p50 at {size:,}: "
                  f"{pg_exact_side.p50() / exact.p50():.2f}x; Postgres exact top 10 = "
                  f"SQLite exact: {pg_exact_side.recall(exact):.3f}")  # fmt: skip
        print(f"peak RSS of the bench process: {peak_mb():,.0f} MB")
        for side in sides:
            side.searcher.close()
        db.close()
        if pg_db is not None:
            pg_db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument(
        "--cache",
        type=Path,
        help="keep each size's SQLite corpus and vectors here and reuse them (e.g. /tmp/kairox-1m)",
    )
    parser.add_argument(
        "--vectors-cache",
        type=Path,
        help="where the sizes' vectors are kept when not in --cache (the 1M SQLite corpus and "
        "the 1M vectors may live apart)",
    )
    parser.add_argument(
        "--settle-ms",
        type=float,
        default=200.0,
        help="untimed pause after each exact search, for the BLAS threads of its matrix product "
        "to stop spinning before the next searcher (0: none, as before issue 34's last pass)",
    )
    parser.add_argument(
        "--pg-url",
        help="a Postgres database filled with this size's corpus before (one size; e.g. by "
        "this script's fill on a server kept up), used instead of starting and filling one",
    )
    parser.add_argument(
        "--pg-exact-max",
        type=int,
        default=300_000,
        help="up to this size Postgres's exact hybrid runs too (its matrix costs memory)",
    )
    parser.add_argument(
        "--pg-shared-buffers",
        default="2GB",
        help="the server's shared_buffers: an HNSW walk reads hundreds of index pages, and the "
        "default 128 MB does not hold the index of 100k 384-d vectors (195 MB)",
    )
    parser.add_argument(
        "--pg-ef",
        help="Postgres ANN searchers with these hnsw.ef_search values (comma-separated; each "
        "asks every query in turn) instead of one with the store's schedule by the scope's rows "
        "(chunk_index.ef_search_for)",
    )
    args = parser.parse_args()
    server = None
    if args.postgres and not args.pg_url:
        from kairox.testing.postgres import EmbeddedPostgres

        server = EmbeddedPostgres.start()
        server.configure(shared_buffers=args.pg_shared_buffers)
    print(f"## Hybrid search at scale: exact scan vs HNSW ({args.queries} queries, min-max, "
          "top-10; every searcher answers each query in turn)")  # fmt: skip
    print(
        "| store, chunks | fill s | index build s | exact hybrid p50 ms | ANN hybrid p50 ms | "
        "ANN p95 ms | exact / ANN | recall@10 vs SQLite exact | load avg |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            run_size(size, args, server)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
