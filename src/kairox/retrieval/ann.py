"""An approximate vector index (HNSW, from ``hnswlib``) beside a scope's in-memory matrix, for
scopes big enough that the exact scan costs more than the graph walk.

The index mirrors one ``Matrix`` exactly: it is built from the matrix's rows, and when the matrix
is caught up (``vectors.caught_up``, or reloaded) the index is caught up from the difference
between the two matrices: rows gone are marked deleted, rows new or changed are (re)inserted
under their chunk id. So a search never sees a vector the matrix does not hold, and nothing is
rebuilt for a few changed files. ``bench/ann_speed.py`` measured the libraries and the crossover
(docs/benchmarks.md); hnswlib won on build time, query time and recall at every size tried.
Cosines it returns are recomputed exactly from the matrix rows, so scores do not change with
the index; only which rows are candidates is approximate (recall@10 >= 0.98 against exact).
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import numpy as np

from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.vectors import Matrix, row_dots
from kairox.store.vectors import IdArray

M = 16
EF_CONSTRUCTION = 128
EF_SEARCH = 512  # recall@10 0.979 at 300k (0.947 at 256), 3 ms under load (bench/ann_speed.py)


def available() -> bool:
    return importlib.util.find_spec("hnswlib") is not None


class VectorIndex:
    """HNSW over a matrix's rows, labelled by chunk id; inner product on unit rows = cosine."""

    def __init__(self, dimensions: int) -> None:
        import hnswlib

        self._index: Any = hnswlib.Index(space="ip", dim=dimensions)
        self._index.init_index(max_elements=1024, M=M, ef_construction=EF_CONSTRUCTION)
        self._capacity = 1024
        self._lock = threading.Lock()
        self.dimensions = dimensions

    @classmethod
    def build(cls, matrix: Matrix) -> VectorIndex:
        index = cls(matrix.vectors.shape[1])
        index.upsert(matrix.ids, matrix.vectors)
        return index

    def upsert(self, ids: IdArray, vectors: FloatMatrix) -> None:
        """Insert rows under their ids; an id already there (or marked deleted) is replaced."""
        if not len(ids):
            return
        with self._lock:
            needed = self._index.get_current_count() + len(ids)
            if needed > self._capacity:
                self._capacity = max(needed, 2 * self._capacity)
                self._index.resize_index(self._capacity)
            self._index.add_items(vectors, ids, num_threads=-1)

    def remove(self, ids: IdArray) -> None:
        with self._lock:
            for i in ids.tolist():
                self._index.mark_deleted(i)

    def nearest(self, vector: FloatMatrix, k: int, alive: int) -> IdArray:
        """Ids of (about) the ``k`` rows nearest ``vector``; ``alive`` is the row count."""
        k = min(k, alive)
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        with self._lock:
            self._index.set_ef(max(EF_SEARCH, k))
            labels, _ = self._index.knn_query(vector, k=k, num_threads=1)
        return np.asarray(labels[0], dtype=np.int64)


def caught_up(index: VectorIndex, old: Matrix, new: Matrix) -> VectorIndex | None:
    """``index`` (which mirrors ``old``) brought to mirror ``new``; None when the rows changed
    size (a new index is built)."""
    if old.vectors.shape[1] != new.vectors.shape[1]:
        return None
    _, at_old, at_new = np.intersect1d(old.ids, new.ids, assume_unique=True, return_indices=True)
    if old.keys is not None and new.keys is not None:
        same = np.fromiter(
            (old.keys.get(i) == new.keys.get(i) for i in new.ids[at_new].tolist()),
            dtype=bool,
            count=len(at_new),
        )
    else:
        same = ~np.any(old.vectors[at_old] != new.vectors[at_new], axis=1)
    index.remove(np.setdiff1d(old.ids, new.ids, assume_unique=True))
    fresh = np.ones(len(new.ids), dtype=bool)
    fresh[at_new[same]] = False
    index.upsert(new.ids[fresh], new.vectors[fresh])
    return index


def nearest(
    matrix: Matrix, index: VectorIndex, vector: FloatMatrix, depth: int
) -> list[tuple[int, float]]:
    """The index's candidates for ``vector`` with their exact cosines, best first."""
    labels = index.nearest(vector, depth, len(matrix.ids))
    at = _present(matrix, labels) if len(matrix.ids) else np.zeros(0, dtype=np.int64)
    cosines = row_dots(matrix.vectors[at], vector)
    order = np.argsort(-cosines, kind="stable")
    return list(zip(matrix.ids[at][order].tolist(), cosines[order].tolist(), strict=True))


def _present(matrix: Matrix, labels: IdArray) -> IdArray:
    at = np.minimum(np.searchsorted(matrix.ids, labels), len(matrix.ids) - 1)
    found: IdArray = at[matrix.ids[at] == labels]
    return found


def cosines_of(matrix: Matrix, ids: list[int], vector: FloatMatrix) -> tuple[IdArray, FloatMatrix]:
    """Exact cosines of the given ids' rows (those the matrix holds), as (ascending ids, cosines):
    the keyword side's candidates, which the fusion scores by meaning too."""
    if not ids or not len(matrix.ids):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    wanted = np.unique(np.asarray(ids, dtype=np.int64))
    at = _present(matrix, wanted)
    return matrix.ids[at], row_dots(matrix.vectors[at], vector)
