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
    assert typed.keyword_keys("ws_missing") == []
    assert typed.keyword_weights == (0.5, 1.0)


def test_chunks_of_one_workspace_are_invisible_from_another(store: ChunkStore) -> None:
    store.ensure_workspace("ws_a", "/a")
    store.ensure_workspace("ws_b", "/b")
    store.write_files("ws_a", [update("x.txt", "alpha words")], model="m")
    store.write_files("ws_b", [update("x.txt", "alpha words")], model="m")
    ((a_id, _),) = store.keyword_keys("ws_a")
    ((b_id, _),) = store.keyword_keys("ws_b")
    assert a_id != b_id
    assert store.keyword_documents("ws_a") == [(a_id, ("x.txt", "alpha words"))]
    assert store.keyword_documents("ws_a", [a_id, b_id]) == [(a_id, ("x.txt", "alpha words"))]
    assert store.keyword_documents("ws_a", after_id=a_id) == []
    assert [c.id for c in store.get_chunks("ws_a", [a_id, b_id])] == [a_id]
    assert store.load_vectors("ws_a", "m")[0].tolist() == [a_id]


def test_rewriting_and_deleting_files_keeps_counts_and_keyword_feed_in_step(
    store: ChunkStore,
) -> None:
    store.ensure_workspace("ws", "/w")
    store.write_files("ws", [update("a.txt", "one"), update("b.txt", "two")], model="m")
    assert store.chunk_count("ws") == 2
    keys = dict(store.keyword_keys("ws"))
    generation = store.generation("ws")
    store.write_files("ws", [update("a.txt", "uno")], model="m")
    assert store.chunk_count("ws") == 2 and store.generation("ws") == generation + 1
    changed = {i for i, key in store.keyword_keys("ws") if keys.get(i) != key}
    assert [fields for _, fields in store.keyword_documents("ws", sorted(changed))] == [
        ("a.txt", "uno")
    ]  # the rewritten chunk reads as new even if its id was reused
    assert store.delete_files("ws", ["a.txt", "b.txt"]) == 2
    assert store.chunk_count("ws") == 0
    assert store.keyword_keys("ws") == [] and store.keyword_documents("ws") == []
    assert store.load_vectors("ws", "m")[0].size == 0


def test_vectors_of_a_changed_size_do_not_mix(store: ChunkStore) -> None:
    store.ensure_workspace("ws", "/w")
    store.write_files("ws", [update("a.txt", "one", dims=4)], model="m")
    store.write_files("ws", [update("b.txt", "two", dims=8)], model="m")
    ids, matrix = store.load_vectors("ws", "m")
    assert matrix.shape == (1, 8) and len(ids) == 1
    assert store.count_missing_vectors("ws", "m") == 0
    assert store.count_missing_vectors("ws", "other") == 2
