"""The ``ChunkStore`` contract on both backends: isolation by workspace, cascades, corpus state,
vector matrices."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval.chunk_store import ChunkStore, FileState, FileUpdate, SqliteChunkStore
from kairox.retrieval.chunking import chunk_text
from kairox.store.db import Database


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
    assert typed.corpus_state() == (0, 0)


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
    assert store.document_frequencies(["alpha", "absent"]) == {"alpha": 2, "absent": 0}


def test_rewriting_and_deleting_files_keeps_counts_and_fts_in_step(
    store: ChunkStore,
) -> None:
    store.ensure_workspace("ws", "/w")
    before = store.corpus_state()
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
    assert store.corpus_state() != before and store.corpus_state()[0] == 0


def test_vectors_of_a_changed_size_do_not_mix(store: ChunkStore) -> None:
    store.ensure_workspace("ws", "/w")
    store.write_files("ws", [update("a.txt", "one", dims=4)], model="m")
    store.write_files("ws", [update("b.txt", "two", dims=8)], model="m")
    ids, matrix = store.load_vectors("ws", "m")
    assert matrix.shape == (1, 8) and len(ids) == 1
    assert store.count_missing_vectors("ws", "m") == 0
    assert store.count_missing_vectors("ws", "other") == 2
