"""The ``ChunkStore`` contract on both backends: isolation by workspace, cascades, corpus state,
vector matrices."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval.chunking import chunk_text
from kairox.store.chunks import FileState, FileUpdate
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.protocols import ChunkStore


@pytest.fixture
def store(tmp_path: Path, store_url: str | None) -> Iterator[ChunkStore]:
    if store_url is not None:
        from kairox.store.postgres.chunks import PostgresChunkStore
        from kairox.store.postgres.db import PgDatabase
        from kairox.store.postgres.schema import MIGRATIONS

        yield PostgresChunkStore(PgDatabase.open(store_url, MIGRATIONS))
        return
    db = Database.open(tmp_path / "kairox.db")
    yield SqliteChunkStore(db)
    db.close()


def update(path: str, text: str, dims: int = 4) -> FileUpdate:
    chunks = tuple(chunk_text(text, path))
    vectors = np.ones((len(chunks), dims), dtype=np.float32) / np.sqrt(dims)
    return FileUpdate(FileState(path, len(text), 1, f"h-{text}", 2), chunks, vectors)


def test_store_satisfies_the_protocol(store: ChunkStore) -> None:
    typed: ChunkStore = store
    assert typed.generation("ws_missing") == -1
    assert typed.corpus_state("ws_missing") == (0, 0)


def test_chunks_of_one_workspace_are_invisible_from_another(store: ChunkStore) -> None:
    store.ensure_workspace("ws_a", "/a")
    store.ensure_workspace("ws_b", "/b")
    store.write_files("ws_a", [update("x.txt", "alpha words")], model="m")
    store.write_files("ws_b", [update("x.txt", "alpha words")], model="m")
    (a_id,) = [cid for cid, _ in store.keyword_search("ws_a", '"alpha"', limit=10)]
    (b_id,) = [cid for cid, _ in store.keyword_search("ws_b", '"alpha"', limit=10)]
    assert a_id != b_id
    assert [c.id for c in store.get_chunks("ws_a", [a_id, b_id])] == [a_id]
    assert store.load_vectors("ws_a", "m")[0].tolist() == [a_id]
    # Statistics are the workspace's own: another workspace's chunks never count.
    assert store.document_frequencies("ws_a", ["alpha", "absent"]) == {"alpha": 1, "absent": 0}
    store.write_files("ws_b", [update("y.txt", "alpha again"), update("z.txt", "alpha")], model="m")
    assert store.document_frequencies("ws_a", ["alpha"]) == {"alpha": 1}
    assert store.document_frequencies("ws_b", ["alpha"]) == {"alpha": 3}
    assert store.corpus_state("ws_a")[0] == 1 and store.corpus_state("ws_b")[0] == 3


def test_rewriting_and_deleting_files_keeps_counts_and_fts_in_step(
    store: ChunkStore,
) -> None:
    store.ensure_workspace("ws", "/w")
    before = store.corpus_state("ws")
    store.write_files("ws", [update("a.txt", "one"), update("b.txt", "two")], model="m")
    assert store.chunk_count("ws") == 2
    generation = store.generation("ws")
    store.write_files("ws", [update("a.txt", "uno")], model="m")
    assert store.chunk_count("ws") == 2 and store.generation("ws") == generation + 1
    assert store.keyword_search("ws", '"one"', limit=5) == []
    assert store.delete_files("ws", ["a.txt", "b.txt"]) == 2
    assert store.chunk_count("ws") == 0
    assert store.keyword_search("ws", '"uno" OR "two"', limit=5) == []
    assert store.load_vectors("ws", "m")[0].size == 0
    assert store.corpus_state("ws") != before and store.corpus_state("ws")[0] == 0


def test_vectors_of_a_changed_size_do_not_mix(store: ChunkStore) -> None:
    store.ensure_workspace("ws", "/w")
    store.write_files("ws", [update("a.txt", "one", dims=4)], model="m")
    store.write_files("ws", [update("b.txt", "two", dims=8)], model="m")
    ids, matrix = store.load_vectors("ws", "m")
    assert matrix.shape == (1, 8) and len(ids) == 1
    assert store.count_missing_vectors("ws", "m") == 0
    assert store.count_missing_vectors("ws", "other") == 2


def test_postgres_hybrid_search_is_one_statement_over_hnsw_and_tsvector(pg_url: str) -> None:
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    db = PgDatabase.open(pg_url, MIGRATIONS)
    store = PostgresChunkStore(db)
    store.ensure_workspace("ws", "/w")
    store.ensure_workspace("other", "/o")
    near = np.array([[1, 0, 0, 0]], dtype=np.float32)
    far = np.array([[0, 1, 0, 0]], dtype=np.float32)
    one = tuple(chunk_text("giraffes eat acacia leaves", "a.txt"))
    two = tuple(chunk_text("elephants drink water", "b.txt"))
    store.write_files("ws", [FileUpdate(FileState("a.txt", 1, 1, "h1", 1), one, near)], model="m")
    store.write_files("ws", [FileUpdate(FileState("b.txt", 1, 1, "h2", 1), two, far)], model="m")
    store.write_files(
        "other", [FileUpdate(FileState("a.txt", 1, 1, "h1", 1), one, near)], model="m"
    )
    hits = store.hybrid_candidates("ws", ["elephants"], near[0], "m", limit=10)
    by_path = {h.chunk.path: h for h in hits}
    assert set(by_path) == {"a.txt", "b.txt"}  # other workspaces never leak in
    assert by_path["b.txt"].keyword is not None and by_path["a.txt"].keyword is None
    assert by_path["a.txt"].cosine == pytest.approx(1.0)
    assert by_path["b.txt"].cosine == pytest.approx(0.0)
    indexes = db.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'chunk_vectors'")
    assert any("hnsw" in r["indexdef"] for r in indexes)
    assert any("gin" in r["indexdef"] for r in db.query(
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'chunks'"))  # fmt: skip
    with db.atomic() as conn:  # tiny tables: make the planner show it can use the index
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            r["QUERY PLAN"]
            for r in conn.execute(
                "EXPLAIN SELECT chunk_id FROM chunk_vectors v WHERE v.model = 'm' AND v.dims = 4"
                " ORDER BY v.embedding::vector(4) <=> '[1,0,0,0]'::vector(4) LIMIT 5"
            ).fetchall()
        )
    assert "chunk_vectors_hnsw_" in plan


def test_postgres_document_frequencies_come_from_statistics_on_big_tables(pg_url: str) -> None:
    """Exact counts visit every matching row; from ``estimate_from`` chunks on, a frequent word's
    count is the planner's (ANALYZE) figure and only words outside its statistics are counted."""
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    db = PgDatabase.open(pg_url, MIGRATIONS)
    exact = PostgresChunkStore(db, estimate_from=10**9)
    estimating = PostgresChunkStore(db, estimate_from=0)
    exact.ensure_workspace("ws", "/w")

    def write(first: int, count: int) -> None:
        updates = []
        for i in range(first, first + count):
            text = f"common words here, number{i} and rare{i % 7}"
            chunks = tuple(chunk_text(text, f"f{i}.txt"))
            vectors = np.ones((len(chunks), 4), dtype=np.float32) / 2
            updates.append(FileUpdate(FileState(f"f{i}.txt", 1, 1, f"h{i}", 1), chunks, vectors))
        exact.write_files("ws", updates, model="m")

    write(0, 60)
    db.execute("ANALYZE chunks")  # a small table is sampled whole: the figures are exact
    terms = ["common", "rare3", "number5", "absent", "the"]
    assert estimating.document_frequencies("ws", terms) == exact.document_frequencies("ws", terms)
    assert exact.document_frequencies("ws", terms) == {
        "common": 60, "rare3": 9, "number5": 1, "absent": 0, "the": 0
    }  # fmt: skip
    write(60, 10)  # not analysed again: the estimate stays at the sampled figure
    assert exact.document_frequencies("ws", ["common"]) == {"common": 70}
    assert estimating.document_frequencies("ws", ["common"]) == {"common": 60}
    assert estimating.document_frequencies("ws", ["number65"]) == {"number65": 1}  # counted


def test_native_search_does_not_read_back_the_chunks_it_returned(pg_url: str) -> None:
    from kairox.retrieval.embeddings import create_embedder
    from kairox.retrieval.search import HybridSearcher
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    store = PostgresChunkStore(PgDatabase.open(pg_url, MIGRATIONS))
    embedder = create_embedder("hashing")
    store.ensure_workspace("ws", "/w")
    chunks = tuple(chunk_text("giraffes eat acacia leaves", "a.txt"))
    vectors = embedder.embed([c.text for c in chunks])
    store.write_files(
        "ws",
        [FileUpdate(FileState("a.txt", 1, 1, "h", 1), chunks, vectors)],
        model=embedder.model_id,
    )

    def no_read_back(workspace_id: str, ids: object) -> list[object]:
        raise AssertionError("get_chunks called for chunks the search already returned")

    store.get_chunks = no_read_back  # type: ignore[method-assign,assignment]
    hits = HybridSearcher(store, embedder).search("ws", "giraffes acacia", k=5)
    assert [h.path for h in hits] == ["a.txt"]
