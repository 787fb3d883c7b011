"""The ``ChunkStore`` contract on both backends: isolation by workspace, cascades, corpus state,
vector matrices."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval.chunking import chunk_text
from kairox.retrieval.embeddings.base import FloatMatrix, l2_normalise
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.search import HybridRanker
from kairox.store.protocols import ChunkStore
from kairox.store.records import FileState, FileUpdate
from kairox.store.vectors import IdArray


@pytest.fixture
def store(chunk_store: ChunkStore) -> ChunkStore:
    return chunk_store


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


def test_missing_vectors_are_counted_per_workspace_and_model(store: ChunkStore) -> None:
    """What an index run embeds: every chunk of the workspace without a vector of the model,
    whatever other workspaces, other models and deleted files hold."""
    store.ensure_workspace("ws", "/w")
    store.ensure_workspace("other", "/o")
    store.write_files("ws", [update("a.txt", "one"), update("b.txt", "two")], model="m")
    store.write_files("other", [update("c.txt", "three"), update("d.txt", "four")], model="n")
    no_vectors = FileUpdate(FileState("e.txt", 4, 1, "h-e", 2), tuple(chunk_text("five", "e.txt")))
    store.write_files("ws", [no_vectors], model="m")
    assert store.count_missing_vectors("ws", "m") == 1  # e.txt's chunk
    assert store.count_missing_vectors("ws", "n") == 3  # other's vectors of n do not count
    missing = store.chunks_missing_vectors("ws", "n", limit=10)
    store.put_vectors("ws", "n", [missing[0][0]], np.ones((1, 4), dtype=np.float32) / 2)
    assert store.count_missing_vectors("ws", "n") == 2
    store.delete_files("ws", ["a.txt", "b.txt", "e.txt"])  # their vectors go with them
    assert store.count_missing_vectors("ws", "m") == 0
    assert store.count_missing_vectors("ws", "n") == 0
    assert store.count_missing_vectors("other", "m") == 2


def test_vectors_of_a_changed_size_do_not_mix(store: ChunkStore) -> None:
    store.ensure_workspace("ws", "/w")
    store.write_files("ws", [update("a.txt", "one", dims=4)], model="m")
    store.write_files("ws", [update("b.txt", "two", dims=8)], model="m")
    ids, matrix = store.load_vectors("ws", "m")
    assert matrix.shape == (1, 8) and len(ids) == 1
    assert store.count_missing_vectors("ws", "m") == 0
    assert store.count_missing_vectors("ws", "other") == 2


class FixedEmbedder:
    """Model "m" with 4 dimensions; the query vector is fixed (the tests compare rankings)."""

    @property
    def model_id(self) -> str:
        return "m"

    @property
    def dimensions(self) -> int:
        return 4

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return l2_normalise(
            np.tile(np.asarray([0.9, 0.3, 0.2, 0.1], dtype=np.float32), (len(texts), 1))
        )


def varied(path: str, text: str, seed: int) -> FileUpdate:
    """A file whose chunks have their own vectors."""
    chunks = tuple(chunk_text(text, path))
    rng = np.random.default_rng(seed)
    vectors = l2_normalise(rng.standard_normal((len(chunks), 4)).astype(np.float32))
    return FileUpdate(FileState(path, len(text), 1, f"h-{text}", 2), chunks, vectors)


def assert_matrix_current(ranker: HybridRanker, store: ChunkStore) -> None:
    """The kept matrix equals a full read, and ranking with it equals a fresh ranker's."""
    ids, matrix = ranker.matrix("ws")
    want_ids, want = store.load_vectors("ws", "m")
    assert ids.tolist() == want_ids.tolist()
    assert np.array_equal(matrix, want)
    fresh = HybridRanker(store, FixedEmbedder())
    for fusion in (FusionMethod.VECTOR, FusionMethod.MINMAX):
        assert ranker.rank("ws", "apple pear", k=20, fusion=fusion) == fresh.rank(
            "ws", "apple pear", k=20, fusion=fusion
        )


def test_in_memory_matrix_reads_only_changed_vectors(store: ChunkStore) -> None:
    """Appends, re-indexed files, deletes and vectors filled in later all reach the kept
    matrix through ``load_vectors_of``; the whole matrix is read once."""
    store.ensure_workspace("ws", "/w")
    fruit = ["apple pear", "pear plum", "apple", "plum fig", "fig apple pear"]
    store.write_files("ws", [varied(f"f{i}.txt", t, i) for i, t in enumerate(fruit)], model="m")
    ranker = HybridRanker(store, FixedEmbedder())
    full: list[str] = []
    deltas: list[list[int]] = []
    ranker.store = Spy(store, full, deltas)  # type: ignore[assignment]
    assert_matrix_current(ranker, store)
    assert full == ["ws"] and deltas == []
    store.write_files("ws", [varied("g.txt", "apple pear again", 10)], model="m")  # append
    assert_matrix_current(ranker, store)
    store.write_files("ws", [varied("f1.txt", "pear plum apple", 11)], model="m")  # re-index
    assert_matrix_current(ranker, store)
    store.delete_files("ws", ["f2.txt", "g.txt"])  # deletes
    assert_matrix_current(ranker, store)
    store.write_files("ws", [varied("h.txt", "apple fig", 12)], model=None)  # no vector yet
    assert_matrix_current(ranker, store)
    ((missing, _),) = store.chunks_missing_vectors("ws", "m", limit=10)
    store.put_vectors("ws", "m", [missing], np.asarray([[0.1, 0.9, 0.0, 0.0]], np.float32))
    assert_matrix_current(ranker, store)
    assert full == ["ws"] and len(deltas) == 3  # g.txt, f1.txt, then h.txt's vector


class Spy:
    """The store, with its full and partial vector reads recorded."""

    def __init__(self, store: ChunkStore, full: list[str], deltas: list[list[int]]) -> None:
        self._store, self._full, self._deltas = store, full, deltas

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    def load_vectors(self, workspace_id: str, model: str) -> tuple[IdArray, FloatMatrix]:
        self._full.append(workspace_id)
        return self._store.load_vectors(workspace_id, model)

    def load_vectors_of(
        self, workspace_id: str, model: str, ids: Sequence[int]
    ) -> tuple[IdArray, FloatMatrix] | None:
        self._deltas.append(sorted(ids))
        return self._store.load_vectors_of(workspace_id, model, ids)

    def vector_keys(self, workspace_id: str, model: str) -> list[tuple[int, str]]:
        return self._store.vector_keys(workspace_id, model)


def test_in_memory_matrix_sees_another_process_writes(
    store: ChunkStore, store_url: str | None, tmp_path: Path
) -> None:
    store.ensure_workspace("ws", "/w")
    store.write_files("ws", [varied("a.txt", "apple pear", 1)], model="m")
    ranker = HybridRanker(store, FixedEmbedder())
    assert_matrix_current(ranker, store)
    script = (
        "import sys, numpy as np\n"
        "from kairox.retrieval.chunking import chunk_text\n"
        "from kairox.store.records import FileState, FileUpdate\n"
        "url = sys.argv[1]\n"
        "if url.startswith('postgres'):\n"
        "    from kairox.store.postgres.chunks import PostgresChunkStore\n"
        "    from kairox.store.postgres.db import PgDatabase\n"
        "    from kairox.store.postgres.schema import MIGRATIONS\n"
        "    store = PostgresChunkStore(PgDatabase.open(url, MIGRATIONS))\n"
        "else:\n"
        "    from kairox.store.chunks_sqlite import SqliteChunkStore\n"
        "    from kairox.store.db import Database\n"
        "    store = SqliteChunkStore(Database.open(url))\n"
        "chunks = tuple(chunk_text('apple plum from elsewhere', 'b.txt'))\n"
        "vectors = np.full((len(chunks), 4), 0.5, dtype=np.float32)\n"
        "update = FileUpdate(FileState('b.txt', 1, 1, 'hb', 2), chunks, vectors)\n"
        "store.write_files('ws', [update], model='m')\n"
        "store.delete_files('ws', ['a.txt'])\n"
    )
    location = store_url or str(tmp_path / "kairox.db")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    subprocess.run([sys.executable, "-c", script, location], check=True, env=env, timeout=120)
    assert_matrix_current(ranker, store)
    ids, matrix = ranker.matrix("ws")
    assert [c.path for c in store.get_chunks("ws", ids.tolist())] == ["b.txt"]
    assert np.allclose(matrix, 0.5)
