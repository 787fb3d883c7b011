"""The approximate vector index (``kairox.retrieval.ann``): same top hits as the exact scan on a
fixed corpus, and never out of step with the store."""

from __future__ import annotations

import os
import random
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval import ann
from kairox.retrieval.embeddings.base import FloatMatrix, l2_normalise
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.search import HybridSearcher
from kairox.retrieval.vectors import Matrix
from kairox.store.protocols import ChunkStore

HOUR_NS = 3600 * 10**9
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
    "river",
    "mountain",
    "forest",
    "ocean",
    "desert",
    "valley",
    "cache",
    "index",
    "vector",
    "matrix",
    "socket",
    "thread",
    "parser",
    "token",
    "query",
]
QUERIES = ["river mountain", "vector index cache", "socket thread parser", "omega", "ocean desert"]


class BagEmbedder:
    """The sum of each word's fixed random vector: cosines vary continuously (no ties between
    different texts) and count as evidence of meaning (the model id is not ``hashing``)."""

    @property
    def model_id(self) -> str:
        return "test-bag:64"

    @property
    def dimensions(self) -> int:
        return 64

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in text.lower().split():
                row += np.random.default_rng(zlib.crc32(word.encode())).standard_normal(64)
        return l2_normalise(rows)


@pytest.fixture
def store_url() -> None:
    """SQLite only: the in-process index. A Postgres store keeps its own (pgvector HNSW,
    ``test_store_vector_index.py``), so its rankers build none."""
    return None


@pytest.fixture
def store(chunk_store: ChunkStore) -> ChunkStore:
    return chunk_store


def write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stamp = path.stat().st_mtime_ns - HOUR_NS
    os.utime(path, ns=(stamp, stamp))


def corpus(root: Path, files: int = 300) -> None:
    rng = random.Random(7)
    for i in range(files):
        write(root, f"f{i:03d}.txt", " ".join(rng.choice(WORDS) for _ in range(12)))


def searchers(store: ChunkStore) -> tuple[HybridSearcher, HybridSearcher]:
    embedder = BagEmbedder()
    exact = HybridSearcher(store, embedder, SearchOptions(ann_min_rows=10**9))
    approximate = HybridSearcher(store, embedder, SearchOptions(ann_min_rows=1))
    return exact, approximate


def top_ids(searcher: HybridSearcher, ws: str, query: str, fusion: FusionMethod) -> list[int]:
    return [hit.chunk_id for hit in searcher.search(ws, query, k=10, fusion=fusion)]


@pytest.mark.parametrize("fusion", [FusionMethod.VECTOR, FusionMethod.MINMAX])
def test_ann_gives_the_exact_top_hits(
    store: ChunkStore, tmp_path: Path, fusion: FusionMethod
) -> None:
    corpus(tmp_path / "ws")
    ws = index_workspace(store, tmp_path / "ws", embedder=BagEmbedder())
    exact, approximate = searchers(store)
    assert approximate.build_vector_index(ws.workspace_id) is not None
    for query in QUERIES:
        wanted = top_ids(exact, ws.workspace_id, query, fusion)
        assert wanted
        assert top_ids(approximate, ws.workspace_id, query, fusion) == wanted
    assert approximate.vector_side(ws.workspace_id)[1] is not None
    assert exact.vector_side(ws.workspace_id)[1] is None


def test_ann_follows_the_store(store: ChunkStore, tmp_path: Path) -> None:
    """Files changed, removed and added after the index was built: the approximate index is
    caught up with the store's changed rows by their versions (not left stale, not rebuilt)
    and still agrees with exact."""
    root = tmp_path / "ws"
    corpus(root)
    embedder = BagEmbedder()
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    exact, approximate = searchers(store)
    first = approximate.build_vector_index(ws)
    assert first is not None and approximate.vector_side(ws)[1] is first

    (root / "f000.txt").unlink()
    write(root, "f001.txt", "zebra zebra zebra")
    write(root, "new.txt", "quokka quokka quokka")
    index_workspace(store, root, embedder=embedder)

    assert approximate.vector_side(ws)[1] is first  # caught up in place, not rebuilt
    for query in [*QUERIES, "zebra", "quokka"]:
        hits = approximate.search(ws, query, k=10, fusion=FusionMethod.VECTOR)
        assert [h.chunk_id for h in hits] == top_ids(exact, ws, query, FusionMethod.VECTOR)
        assert all(h.path != "f000.txt" for h in hits)
    assert approximate.search(ws, "quokka", k=1, fusion=FusionMethod.VECTOR)[0].path == "new.txt"
    assert approximate.search(ws, "zebra", k=1, fusion=FusionMethod.VECTOR)[0].path == "f001.txt"


def test_index_is_built_in_the_background_from_the_second_search(
    store: ChunkStore, tmp_path: Path
) -> None:
    corpus(tmp_path / "ws", files=60)
    ws = index_workspace(store, tmp_path / "ws", embedder=BagEmbedder()).workspace_id
    exact, approximate = searchers(store)
    wanted = top_ids(exact, ws, "river", FusionMethod.VECTOR)
    assert top_ids(approximate, ws, "river", FusionMethod.VECTOR) == wanted  # exact, no build
    assert approximate.vector_side(ws)[1] is None  # the second ask starts the build
    deadline = time.monotonic() + 60
    while approximate.vector_side(ws)[1] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert approximate.vector_side(ws)[1] is not None
    assert top_ids(approximate, ws, "river", FusionMethod.VECTOR) == wanted


def test_caught_up_without_versions_compares_rows() -> None:
    """A store without per-row versions: changed rows are found by their values."""
    rng = np.random.default_rng(1)
    vectors = l2_normalise(rng.standard_normal((50, 8)).astype(np.float32))
    ids = np.arange(100, 150, dtype=np.int64)
    old = Matrix(1, ids, vectors)
    index = ann.VectorIndex.build(old)
    moved = vectors.copy()
    moved[3] = -vectors[3]
    new = Matrix(2, ids[1:], moved[1:])  # row 100 gone, row 103 changed
    caught = ann.caught_up(index, old, new)
    assert caught is index
    assert ann.nearest(index, -vectors[3], 1)[0][0] == 103
    assert 100 not in {i for i, _ in ann.nearest(index, vectors[0], 49)}
    wrong_size = Matrix(3, ids, l2_normalise(rng.standard_normal((50, 4)).astype(np.float32)))
    assert ann.caught_up(index, new, wrong_size) is None
