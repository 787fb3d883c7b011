"""The vector side of hybrid search: a scope's vectors kept as one float32 matrix, caught up
from only the vectors that changed, and exact top-k over its row dots."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.store.protocols import VectorDelta
from kairox.store.vectors import IdArray


@dataclass(frozen=True, slots=True)
class Matrix:
    generation: int
    ids: IdArray  # ascending
    vectors: FloatMatrix
    keys: dict[int, str] | None = None  # each row's version (``VectorDelta`` stores)


BLAS_MIN_ELEMENTS = 1 << 24
"""From this many matrix elements (44k rows of 384) the row dots go to BLAS's threads."""


def row_dots(matrix: FloatMatrix, vector: FloatMatrix) -> FloatMatrix:
    """Each row's dot product with ``vector``. ``matrix @ vector`` is BLAS's gemv, which
    OpenBLAS spreads over spinning threads: on a busy machine that took 37 ms for 10k x 384,
    where ``np.vecdot`` (NumPy 2, a per-row loop on the calling thread) took 0.6 ms. On a big
    matrix the scan is bound by memory bandwidth and two threads read more of it (100k x 384
    on a quiet moment: 4.3 ms gemv, 8.1 ms vecdot), so big matrices stay with BLAS."""
    vecdot = getattr(np, "vecdot", None)
    if vecdot is None or matrix.size >= BLAS_MIN_ELEMENTS:
        result: FloatMatrix = matrix @ vector
    else:
        result = vecdot(matrix, vector)
    return result


SAMPLE = 16
"""Rows of a saved matrix or index compared with the store's before it is trusted."""


def rows_agree(
    ids: IdArray,
    rows_of: Callable[[IdArray], FloatMatrix],
    dims: int,
    store: VectorDelta,
    scope: str,
    model: str,
) -> bool:
    """Whether a sample of saved rows (``ids``, read by ``rows_of``) are the store's vectors of
    the same ids: rows saved from another database (made anew beside old files) or damaged
    ones read as not."""
    if not len(ids):
        return True
    picks = np.unique(np.linspace(0, len(ids) - 1, SAMPLE).astype(np.int64))
    sample = ids[picks]
    loaded = store.load_vectors_of(scope, model, sample.tolist())
    if loaded is None:
        return False
    found, vectors = loaded
    if len(found) != len(sample) or vectors.shape[1] != dims:
        return False
    return bool(np.allclose(rows_of(found), vectors, atol=1e-6))


def caught_up(
    store: VectorDelta, scope: str, model: str, cached: Matrix, keys: dict[int, str]
) -> tuple[IdArray, FloatMatrix, int] | None:
    """``cached`` brought to ``keys``: rows gone or changed dropped, new ones read, and how many
    rows that changed; None when the new vectors are of another size (a full read decides
    which size wins)."""
    old = cached.keys or {}
    kept = np.fromiter(
        (keys.get(i) == old.get(i) for i in cached.ids.tolist()), dtype=bool, count=len(cached.ids)
    )
    have = set(cached.ids[kept].tolist())
    added = [i for i in keys if i not in have]
    if kept.all() and not added:
        return cached.ids, cached.vectors, 0
    changed = int(len(kept) - kept.sum()) + len(added)
    ids, vectors = cached.ids[kept], cached.vectors[kept]
    if added:
        loaded = store.load_vectors_of(scope, model, added)
        if loaded is None:
            return None
        new_ids, new_vectors = loaded
        if len(new_ids):
            if new_vectors.shape[1] != cached.vectors.shape[1]:
                return None
            ids = np.concatenate([ids, new_ids])
            vectors = np.concatenate([vectors, new_vectors])
            if len(ids) > 1 and not bool((ids[1:] > ids[:-1]).all()):
                order = np.argsort(ids, kind="stable")
                ids, vectors = ids[order], vectors[order]
    return ids, np.ascontiguousarray(vectors), changed


def versions(ids: IdArray, keys: dict[int, str]) -> dict[int, str]:
    """Each row's version; a row read after ``keys`` gets none, so it is read again."""
    return {i: keys.get(i, "") for i in ids.tolist()}


def top(ids: IdArray, scores: FloatMatrix, limit: int) -> list[tuple[int, float]]:
    if scores.shape[0] == 0:
        return []
    size = scores.shape[0]
    if size > limit:  # partitioned in place of a negated copy of every score
        part = np.argpartition(scores, size - limit)[size - limit :]
        order = part[np.argsort(-scores[part], kind="stable")]
    else:
        order = np.argsort(-scores, kind="stable")
    return list(zip(ids[order].tolist(), scores[order].tolist(), strict=True))
