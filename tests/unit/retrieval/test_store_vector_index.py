"""A store's own vector index (``IndexedVectors``: pgvector HNSW on Postgres): built per big
workspace, used by the query plan, the same top hits as SQLite's exact search, kept up to date by
writes; and Postgres's batched file writes leave the rows row-by-row writes leave."""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from psycopg import sql

from kairox.retrieval.chunking import chunk_text
from kairox.retrieval.embeddings.base import FloatMatrix, l2_normalise
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.search import HybridSearcher
from kairox.store.chunks_sql import SqlChunkStore
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.postgres import chunk_index
from kairox.store.postgres.chunk_index import ef_search_for, index_name, nearest_statement
from kairox.store.postgres.chunks import PostgresChunkStore
from kairox.store.postgres.db import PgConnection, PgDatabase
from kairox.store.postgres.schema import MIGRATIONS
from kairox.store.protocols import IndexedVectors
from kairox.store.records import FileState, FileUpdate
from kairox.testing.postgres import EmbeddedPostgres

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "mountain",
    "forest",
    "ocean",
    "cache",
    "index",
    "vector",
    "socket",
    "thread",
    "parser",
    "token",
    "query",
    "omega",
    "sigma",
    "valley",
    "desert",
]
QUERIES = ["river mountain", "vector index cache", "socket thread parser", "omega", "ocean desert"]
MODEL = "test-bag:32"


class BagEmbedder:
    """The sum of each word's fixed random vector, unit length (no ties between texts)."""

    @property
    def model_id(self) -> str:
        return MODEL

    @property
    def dimensions(self) -> int:
        return 32

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        rows = np.zeros((len(texts), 32), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in text.lower().split():
                row += np.random.default_rng(zlib.crc32(word.encode())).standard_normal(32)
        return l2_normalise(rows)


def updates(count: int, seed: int = 7, prefix: str = "f") -> list[FileUpdate]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        path = f"{prefix}{i:03d}.txt"
        text = " ".join(rng.choice(WORDS) for _ in range(12))
        chunks = tuple(chunk_text(text, path))
        vectors = BagEmbedder().embed([c.text for c in chunks])
        out.append(FileUpdate(FileState(path, len(text), 1, f"h{i}", 2), chunks, vectors))
    return out


@pytest.fixture
def pg(pg_url: str) -> Iterator[PostgresChunkStore]:
    db = PgDatabase.open(pg_url, MIGRATIONS)
    yield PostgresChunkStore(db)
    db.close()


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[SqliteChunkStore]:
    db = Database.open(tmp_path / "kairox.db")
    yield SqliteChunkStore(db)
    db.close()


def filled(store: SqlChunkStore, files: int = 300) -> str:
    store.ensure_workspace("ws", "/ws")
    store.write_files("ws", updates(files), model=MODEL)
    return "ws"


def hits(searcher: HybridSearcher, query: str, fusion: FusionMethod) -> list[tuple[str, int]]:
    return [(h.path, h.start_line) for h in searcher.search("ws", query, k=10, fusion=fusion)]


def index_rows(store: PostgresChunkStore) -> list[dict[str, str]]:
    return store._db.query(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunk_vectors' "
        "AND indexdef LIKE '%hnsw%'"
    )


def test_migration_lists_indexes_and_drops_the_unused_per_model_ones(
    pg_server: EmbeddedPostgres,
) -> None:
    url = pg_server.fresh_database(migrated=False)
    try:
        before = tuple(m for m in MIGRATIONS if m.name != "0420_chunk_vector_indexes")
        assert len(before) == len(MIGRATIONS) - 1
        PgDatabase.open(url, before).close()
        old = PgDatabase.open(url, ())
        old.execute(
            "CREATE INDEX chunk_vectors_hnsw_0123456789ab ON chunk_vectors USING hnsw "
            "((embedding::vector(4)) vector_cosine_ops) WHERE model = 'm' AND dims = 4"
        )
        old.close()
        db = PgDatabase.open(url, MIGRATIONS)
        store = PostgresChunkStore(db)
        assert index_rows(store) == []
        assert db.query("SELECT * FROM chunk_vector_indexes") == []
        db.close()
    finally:
        pg_server.drop_database(url)


def test_a_big_workspace_gets_a_partial_hnsw_index_the_plan_uses(
    pg: PostgresChunkStore,
) -> None:
    ws = filled(pg)
    assert isinstance(pg, IndexedVectors)
    assert pg.vector_index(ws, MODEL).dims is None
    searcher = HybridSearcher(pg, BagEmbedder(), SearchOptions(ann_min_rows=100))
    assert searcher.build_served_index(ws) == 32
    assert pg.vector_index(ws, MODEL).dims == 32
    ((row),) = index_rows(pg)
    assert row["indexname"] == index_name(ws, MODEL, 32)
    assert "halfvec(32)" in row["indexdef"] and "halfvec_ip_ops" in row["indexdef"]
    assert "m='32'" in row["indexdef"] and "ef_construction='128'" in row["indexdef"]
    assert "'ws'" in row["indexdef"]
    # The planner picks the index by cost on a big table; on 300 rows it is made to, which
    # still proves the statement matches the index (expression, operator, partial predicate).
    statement, params = nearest_statement(ws, MODEL, BagEmbedder().embed(["river"])[0], 10)
    with pg._db.atomic() as conn:
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_sort = off")
        plan = "\n".join(
            str(r["QUERY PLAN"]) for r in conn.execute(sql.SQL("EXPLAIN ") + statement, params)
        )
    assert f"Index Scan using {index_name(ws, MODEL, 32)}" in plan
    # Below ann_min_rows the index is not used, nor built.
    small = HybridSearcher(pg, BagEmbedder(), SearchOptions(ann_min_rows=10_000))
    assert small.served_dims(ws) is None and small.build_served_index(ws) is None


@pytest.mark.parametrize(
    "graph",
    [
        "(embedding::vector(32)) vector_ip_ops)",  # full precision
        "(embedding::halfvec(32)) halfvec_ip_ops) WITH (m = 16, ef_construction = 128)",
    ],
)
def test_an_index_of_other_parameters_is_built_again_then_dropped(
    pg: PostgresChunkStore, graph: str
) -> None:
    ws = filled(pg)
    # As a store of before left it: an index of another element type or M listed for the
    # workspace and model.
    pg._db.execute(
        f"CREATE INDEX chunk_vectors_ann_old ON chunk_vectors USING hnsw ({graph} "
        f"WHERE workspace_id = 'ws' AND model = '{MODEL}' AND dims = 32"
    )
    pg._db.execute(
        "INSERT INTO chunk_vector_indexes(workspace_id, model, dims, name) "
        "VALUES (?, ?, 32, 'chunk_vectors_ann_old')",
        (ws, MODEL),
    )
    assert pg.vector_index(ws, MODEL).dims is None  # not the index the walk's statement uses
    assert pg.build_vector_index(ws, MODEL) == 32
    assert pg.vector_index(ws, MODEL).dims == 32
    assert [r["indexname"] for r in index_rows(pg)] == [index_name(ws, MODEL, 32)]


def test_nearest_vectors_gives_the_exact_cosines(pg: PostgresChunkStore) -> None:
    ws = filled(pg)
    pg.build_vector_index(ws, MODEL)
    asked = BagEmbedder().embed(["river mountain"])[0]
    found = pg.nearest_vectors(ws, MODEL, asked, 20)
    ids, cosines = pg.vector_cosines(ws, MODEL, asked, [cid for cid, _ in found])
    exact = dict(zip(ids.tolist(), cosines.tolist(), strict=True))
    assert len(found) == 20
    # Full precision, not the graph's half-precision copies (which differ by ~1e-3).
    assert all(abs(cosine - exact[cid]) < 1e-6 for cid, cosine in found)
    assert [c for _, c in found] == sorted((c for _, c in found), reverse=True)


@pytest.mark.parametrize("fusion", [FusionMethod.VECTOR, FusionMethod.MINMAX])
def test_postgres_index_gives_sqlite_exact_top_hits(
    pg: PostgresChunkStore, lite: SqliteChunkStore, fusion: FusionMethod
) -> None:
    filled(pg)
    filled(lite)
    exact = HybridSearcher(lite, BagEmbedder(), SearchOptions(ann_min_rows=10**9))
    served = HybridSearcher(pg, BagEmbedder(), SearchOptions(ann_min_rows=1))
    assert served.build_served_index("ws") == 32

    def no_matrix(*_: object) -> None:
        raise AssertionError("the matrix was read")

    pg.load_vectors = no_matrix  # type: ignore[method-assign]
    pg.load_vectors_of = no_matrix  # type: ignore[method-assign]
    for query in QUERIES:
        wanted = hits(exact, query, fusion)
        assert wanted
        assert hits(served, query, fusion) == wanted


def test_writes_after_the_build_reach_the_index(pg: PostgresChunkStore) -> None:
    ws = filled(pg)
    searcher = HybridSearcher(pg, BagEmbedder(), SearchOptions(ann_min_rows=1))
    searcher.build_served_index(ws)
    text = "quokka quokka quokka"
    chunks = tuple(chunk_text(text, "new.txt"))
    new = FileUpdate(FileState("new.txt", 1, 1, "hq", 2), chunks, BagEmbedder().embed([text]))
    pg.write_files(ws, [new], model=MODEL)
    pg.delete_files(ws, ["f000.txt"])
    found = searcher.search(ws, "quokka", k=3, fusion=FusionMethod.VECTOR)
    assert found[0].path == "new.txt"
    assert all(h.path != "f000.txt" for h in searcher.search(ws, "river", k=50))


def test_index_is_built_in_the_background_from_the_second_search(
    pg: PostgresChunkStore,
) -> None:
    ws = filled(pg, files=60)
    searcher = HybridSearcher(pg, BagEmbedder(), SearchOptions(ann_min_rows=1))
    first = hits(searcher, "river", FusionMethod.VECTOR)  # exact: no build yet
    assert searcher.served_dims(ws) is None  # the second ask starts the build
    deadline = time.monotonic() + 60
    while pg.vector_index(ws, MODEL).dims is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pg.vector_index(ws, MODEL).dims == 32
    other = HybridSearcher(pg, BagEmbedder(), SearchOptions(ann_min_rows=1))  # a new process
    assert other.served_dims(ws) == 32
    assert hits(other, "river", FusionMethod.VECTOR) == first


def test_batched_writes_leave_the_rows_sqlite_leaves(
    pg: PostgresChunkStore, lite: SqliteChunkStore
) -> None:
    """Postgres writes a batch in a few statements (COPY); rows, ids, vectors (bit for bit),
    counts and file states are what SQLite's row-by-row writes leave."""
    batches = [
        updates(40),
        [*updates(5, seed=9), *updates(3, seed=11, prefix="g")],  # rewrites and new files
        [FileUpdate(FileState("empty.txt", 0, 1, "e", 2), (), None)],
        [FileUpdate(u.state, u.chunks, None) for u in updates(2, seed=13, prefix="h")],
    ]
    for store in (pg, lite):
        store.ensure_workspace("ws", "/ws")
        for batch in batches:
            store.write_files("ws", batch, model=MODEL)
        store.delete_files("ws", ["f001.txt"])
    assert pg.write_files("ws", [], model=MODEL) == lite.write_files("ws", [], model=MODEL) == 0
    assert pg.chunk_count("ws") == lite.chunk_count("ws") > 0
    assert pg.file_states("ws") == lite.file_states("ws")
    pg_docs, lite_docs = pg.keyword_documents("ws"), lite.keyword_documents("ws")
    assert [d for _, d in pg_docs] == [d for _, d in lite_docs]
    ids = [i for i, _ in pg_docs]
    assert ids == sorted(ids)
    lite_ids = [i for i, _ in lite_docs]
    strip = [(c.path, c.ord, c.start_line, c.end_line, c.text, c.chunk_hash) for c in
             pg.get_chunks("ws", ids)]  # fmt: skip
    assert strip == [
        (c.path, c.ord, c.start_line, c.end_line, c.text, c.chunk_hash)
        for c in lite.get_chunks("ws", lite_ids)
    ]
    pg_ids, pg_vectors = pg.load_vectors("ws", MODEL)
    lite_ids_v, lite_vectors = lite.load_vectors("ws", MODEL)
    assert len(pg_ids) == len(lite_ids_v) > 0
    assert pg_vectors.tobytes() == lite_vectors.tobytes()
    assert pg.count_missing_vectors("ws", MODEL) == lite.count_missing_vectors("ws", MODEL) == 2


def test_ef_search_grows_with_the_scope_and_is_never_below_the_depth() -> None:
    sizes = [1_000, 100_000, 150_001, 300_000, 1_000_000, 4_000_000]
    settings = [ef_search_for(rows, 100) for rows in sizes]
    assert settings == sorted(settings)
    assert ef_search_for(100_000, 100) < ef_search_for(1_000_000, 100)
    assert ef_search_for(1_000_000, 100) < ef_search_for(4_000_000, 100)
    assert ef_search_for(1_000, 500) == 500


def test_each_walk_runs_with_its_scopes_ef_search(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small and a bigger scope walk with their own ``hnsw.ef_search``, on one connection;
    it is set again only when it changes, and a transaction's setting stays in it."""
    db = PgDatabase.open(pg_url, MIGRATIONS, max_size=1)  # every statement on one connection
    pg = PostgresChunkStore(db)
    for ws, files in (("small", 30), ("big", 200)):
        pg.ensure_workspace(ws, f"/{ws}")
        pg.write_files(ws, updates(files), model=MODEL)
        assert pg.build_vector_index(ws, MODEL) == 32
    monkeypatch.setattr(chunk_index, "EF_SEARCH_SCHEDULE", ((50, 40), (1_000, 120)))
    sent: list[str] = []
    real_execute = PgConnection.execute

    def spying(self: PgConnection, statement: object, params: object = ()) -> object:
        sent.append(str(statement))
        return real_execute(self, statement, params)  # type: ignore[arg-type]

    monkeypatch.setattr(PgConnection, "execute", spying)
    asked = BagEmbedder().embed(["river mountain"])[0]

    def walked_with(ws: str) -> str:
        assert len(pg.nearest_vectors(ws, MODEL, asked, 10)) == 10
        return str(db.query_one("SELECT current_setting('hnsw.ef_search') AS ef")["ef"])  # type: ignore[index]

    assert walked_with("small") == "40"
    assert walked_with("big") == "120"
    assert walked_with("big") == "120"
    assert walked_with("small") == "40"
    assert sum("set_config" in s for s in sent) == 3  # not for the second walk of "big"
    with db.atomic():
        assert walked_with("big") == "120"
    assert db.query_one("SELECT current_setting('hnsw.ef_search') AS ef") == {"ef": "40"}
    assert walked_with("small") == "40"
