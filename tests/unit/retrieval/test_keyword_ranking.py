"""The hybrid searcher's keyword side on both stores: an in-memory BM25 index per workspace,
caught up incrementally (only changed chunks are read), equal to a rebuild, with the
workspace's own statistics, and the same hits on SQLite and Postgres."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval.chunking import chunk_text
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.search import HybridSearcher, SearchHit
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.protocols import ChunkStore
from kairox.store.records import FileState, FileUpdate

EMBEDDER = HashingEmbedder(64)
FILES = {
    "zoo/lions.md": "Lions sleep most of the day and hunt at night in the savanna",
    "zoo/zebras.md": "Zebras graze on the savanna; their stripes confuse the lions",
    "src/runner.py": "def run(): the runner runs the running tasks",
    "src/tasks.py": "tasks queue: each task runs once, a runner picks tasks",
    "notes.txt": "Night shift notes: feed the lions, check the zebra fences",
}
QUERIES = ["lions at night", "zebra stripes savanna", "runner tasks", "fences", "unknownword"]


def open_store(tmp_path: Path, url: str | None, name: str = "kairox") -> ChunkStore:
    if url is None:
        return SqliteChunkStore(Database.open(tmp_path / f"{name}.db"))
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    return PostgresChunkStore(PgDatabase.open(url, MIGRATIONS))


@pytest.fixture
def store(tmp_path: Path, store_url: str | None) -> Iterator[ChunkStore]:
    yield open_store(tmp_path, store_url)


def write(store: ChunkStore, ws: str, files: dict[str, str]) -> None:
    updates = []
    for path, text in files.items():
        chunks = tuple(chunk_text(text, path))
        vectors = EMBEDDER.embed([c.text for c in chunks])
        updates.append(FileUpdate(FileState(path, len(text), 1, f"h-{text}", 1), chunks, vectors))
    store.ensure_workspace(ws, f"/{ws}")
    store.write_files(ws, updates, model=EMBEDDER.model_id)


def results(searcher: HybridSearcher, ws: str) -> list[list[tuple[str, float, float | None]]]:
    out = []
    for query in QUERIES:
        for fusion in (FusionMethod.BM25, FusionMethod.AUTO):
            hits: Sequence[SearchHit] = searcher.search(ws, query, k=5, fusion=fusion)
            out.append([(h.path, round(h.score, 9), h.bm25 and round(h.bm25, 5)) for h in hits])
    return out


class CountingReads:
    """Wraps a store and records which chunk texts the keyword side reads."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self.reads: list[int | None] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def keyword_documents(
        self, workspace_id: str, ids: Sequence[int] | None = None, *, after_id: int = 0
    ) -> list[tuple[int, tuple[str, ...]]]:
        docs = self.store.keyword_documents(workspace_id, ids, after_id=after_id)
        self.reads.append(None if ids is None else len(docs))
        return docs


def test_updates_are_read_incrementally_and_equal_a_rebuild(store: ChunkStore) -> None:
    write(store, "ws", FILES)
    counting = CountingReads(store)
    searcher = HybridSearcher(counting, EMBEDDER)  # type: ignore[arg-type]
    assert searcher.search("ws", "lions", k=3)[0].path in {"zoo/lions.md", "notes.txt"}
    searcher.search("ws", "zebra", k=3)
    chunks = store.chunk_count("ws")
    assert counting.reads == [chunks]  # built once from every chunk (one batch), then kept
    write(store, "ws", {"notes.txt": "Day shift notes: water the zebras", "new.md": "lions"})
    store.delete_files("ws", ["src/tasks.py"])
    got = results(searcher, "ws")
    assert counting.reads == [chunks, 2]  # only the rewritten and the new chunk were read
    fresh = HybridSearcher(store, EMBEDDER)
    assert got == results(fresh, "ws")
    assert all(h.path != "src/tasks.py" for h in searcher.search("ws", "tasks", k=5))


def test_another_workspace_never_changes_a_score(store: ChunkStore) -> None:
    write(store, "a", FILES)
    write(store, "b", FILES)
    searcher = HybridSearcher(store, EMBEDDER)
    before = results(searcher, "b")
    write(store, "a", {f"more{i}.md": "lions lions night runner tasks" for i in range(30)})
    assert results(searcher, "b") == before
    assert results(HybridSearcher(store, EMBEDDER), "b") == before


def test_postgres_ranks_exactly_as_sqlite(tmp_path: Path, pg_url: str) -> None:
    lite = open_store(tmp_path, None)
    pg = open_store(tmp_path, pg_url)
    rng = np.random.default_rng(4)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "lions",
        "zebras",
        "runner",
        "tasks",
        "night",
        "savanna",
        "fences",
    ]
    files = {f"f{i}.txt": " ".join(rng.choice(words, 12)) for i in range(40)}
    for store in (lite, pg):
        write(store, "ws", FILES | files)
        store.delete_files("ws", ["f3.txt"])
    assert results(HybridSearcher(pg, EMBEDDER), "ws") == results(
        HybridSearcher(lite, EMBEDDER), "ws"
    )
