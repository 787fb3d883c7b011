"""An approximate vector index (HNSW, from ``hnswlib``) of a scope's vectors, for scopes big
enough that the exact scan costs more than the graph walk, saved between processes.

The index holds the scope's vectors themselves and knows which rows it holds (``ids``) and, on a
store with per-row versions (``VectorDelta``), each row's version (``digests``), so once it is
there the scope's matrix is not needed: a fresh process loads the saved index (``load``) instead
of reading every vector from the store, and catches it up from the versions (``caught_up_keys``):
rows gone are marked deleted, rows new or changed are (re)inserted under their chunk id. An index
built in a process from its matrix is caught up from the difference of two matrices
(``caught_up``) on a store without versions. So a search never sees a vector the store no longer
holds, and nothing is rebuilt for a few changed files. ``bench/ann_speed.py`` measured the
libraries and the crossover (docs/benchmarks.md); hnswlib won on build time, query time and
recall at every size tried. Cosines it returns are the inner products of its stored rows (the
exact scan's up to float rounding), so scores do not change with the index; only which rows are
candidates is approximate.
"""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np

from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.keyword_snapshot import key_digest
from kairox.retrieval.vectors import Matrix, row_dots, rows_agree
from kairox.store.protocols import VectorDelta
from kairox.store.vector_index_files import IndexFiles, publish, read_table
from kairox.store.vectors import IdArray

log = logging.getLogger(__name__)

M = 32
"""Links per node. 16 capped recall@10 against exact: 0.952-0.978 at 300k for ef_search 256-1024,
0.963-0.965 at 1M for 512-2048 (more ef barely helped: the graph was the limit); 32 gives 0.999
at 300k from ef_search 256 (``bench/ann_speed.py --m``) and at 1M the hybrid's 0.992 at 512
(M=16: 0.970), the vector side's alone 0.969 (``bench/ann_saved.py``; docs/benchmarks.md), for a
longer build and 5-8% more memory."""
EF_CONSTRUCTION = 128
EF_SEARCH = 512  # hybrid recall@10 at 1M: 0.986 at 256, 0.992 at 512, 1.000 at 1024 (M=32)
FORMAT = 2
"""Bump when the saved layout or the build parameters change: older saved indexes are rebuilt."""


@functools.cache
def available() -> bool:
    """Whether hnswlib is installed (looked up once: the lookup walks ``sys.path``, a tenth of a
    millisecond that every search paid)."""
    import importlib.util

    return importlib.util.find_spec("hnswlib") is not None


class VectorIndex:
    """HNSW over a scope's rows, labelled by chunk id; inner product on unit rows = cosine.
    ``ids`` are the rows it holds (ascending), ``digests`` their versions (``key_digest``) when
    the store has versions, ``generation`` the scope's generation it mirrors."""

    def __init__(self, dimensions: int, inner: Any = None) -> None:
        import hnswlib

        if inner is None:
            inner = hnswlib.Index(space="ip", dim=dimensions)
            inner.init_index(max_elements=1024, M=M, ef_construction=EF_CONSTRUCTION)
        self._index: Any = inner
        self._capacity = int(inner.get_max_elements())
        self._lock = threading.Lock()
        self.dimensions = dimensions
        self.ids: IdArray = np.zeros(0, dtype=np.int64)
        self.digests: dict[int, int] | None = None
        self.generation = -1

    @classmethod
    def build(cls, matrix: Matrix) -> VectorIndex:
        index = cls(matrix.vectors.shape[1])
        index.upsert(matrix.ids, matrix.vectors)
        index.mirror(matrix)
        return index

    def __len__(self) -> int:
        return len(self.ids)

    def mirror(self, matrix: Matrix) -> None:
        """Record that the index now holds exactly ``matrix``'s rows."""
        self.ids = matrix.ids.copy()
        self.generation = matrix.generation
        if matrix.keys is not None:
            self.digests = {i: key_digest(k) for i, k in matrix.keys.items() if k}

    def upsert(self, ids: IdArray, vectors: FloatMatrix) -> None:
        """Insert rows under their ids; an id already there (or marked deleted) is replaced."""
        if not len(ids):
            return
        with self._lock:
            needed = int(self._index.get_current_count()) + len(ids)
            if needed > self._capacity:
                self._capacity = max(needed, 2 * self._capacity)
                self._index.resize_index(self._capacity)
            self._index.add_items(vectors, ids, num_threads=-1)
            self.ids = np.union1d(self.ids, ids)

    def remove(self, ids: IdArray) -> None:
        held = self.held(np.unique(ids))
        with self._lock:
            for i in held.tolist():
                self._index.mark_deleted(i)
            self.ids = np.setdiff1d(self.ids, held, assume_unique=True)

    def nearest(self, vector: FloatMatrix, k: int) -> tuple[IdArray, FloatMatrix]:
        """Ids of (about) the ``k`` rows nearest ``vector``, and their inner products."""
        k = min(k, len(self.ids))
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        with self._lock:
            self._index.set_ef(max(EF_SEARCH, k))
            labels, distances = self._index.knn_query(vector, k=k, num_threads=1)
        return np.asarray(labels[0], dtype=np.int64), 1.0 - distances[0]

    def rows(self, ids: IdArray) -> FloatMatrix:
        """The stored vectors of ``ids`` (each one the index holds)."""
        if not len(ids):
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            found = self._index.get_items(ids, return_type="list")  # "numpy" is 3x slower
        return np.asarray(found, dtype=np.float32).reshape(len(ids), self.dimensions)

    def held(self, ids: IdArray) -> IdArray:
        """Those of ``ids`` (ascending) the index holds."""
        if not len(self.ids):
            return self.ids
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        found: IdArray = ids[self.ids[at] == ids]
        return found

    def save(self, files: IndexFiles) -> None:
        """Write the index to ``files``: the graph under a fresh name, then the table naming it
        (atomically replaced), then the graph the old table named removed; a reader never
        pairs a table with another save's graph."""
        files.folder.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:12]
        graph = files.path(f".{token}.hnsw")
        with self._lock:
            self._index.save_index(str(graph))
            ids, digests = self.ids.copy(), dict(self.digests or {})
            meta = {
                "format": FORMAT,
                "dimensions": self.dimensions,
                "generation": self.generation,
                "versions": self.digests is not None,
            }
        arrays = {
            "ids": ids,
            "digest_ids": np.fromiter(digests.keys(), dtype=np.int64, count=len(digests)),
            "digests": np.fromiter(digests.values(), dtype=np.uint64, count=len(digests)),
        }
        publish(
            files.path(".npz"), graph, meta, arrays, key="graph", orphans=f"{files.stem}.*.hnsw"
        )

    @classmethod
    def load(cls, files: IndexFiles) -> VectorIndex | None:
        """The index ``save`` wrote, or None when there is none; one of another format or that
        does not read is reported in one line (and rebuilt by the caller)."""
        table = files.path(".npz")
        if not table.is_file():
            return None
        try:
            import hnswlib

            found = read_table(table, FORMAT)
            if found is None:
                log.warning("saved vector index %s is of an older format: rebuilt", table)
                return None
            meta, arrays = found
            ids = np.asarray(arrays["ids"], dtype=np.int64)
            digest_ids = arrays["digest_ids"].tolist()
            digest_values = arrays["digests"].tolist()
            dimensions = int(meta["dimensions"])
            inner = hnswlib.Index(space="ip", dim=dimensions)
            inner.load_index(str(files.folder / str(meta["graph"])))
            index = cls(dimensions, inner)
            if len(ids) and not bool((ids[1:] > ids[:-1]).all()):
                raise ValueError("ids out of order")
            if int(inner.get_current_count()) < len(ids):
                raise ValueError("fewer rows than its table")
            index.ids = ids
            index.generation = int(meta["generation"])
            if meta.get("versions"):
                index.digests = dict(zip(digest_ids, digest_values, strict=True))
            return index
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            log.warning("saved vector index %s does not read (%s): rebuilt", table, exc)
            return None


def agrees(index: VectorIndex, store: VectorDelta, scope: str, model: str) -> bool:
    """Whether a sample of the index's rows are the store's vectors of the same ids
    (``retrieval.vectors.rows_agree``)."""
    return rows_agree(index.ids, index.rows, index.dimensions, store, scope, model)


def caught_up_keys(
    index: VectorIndex,
    store: VectorDelta,
    scope: str,
    model: str,
    keys: Mapping[int, str],
    generation: int,
) -> int | None:
    """Bring ``index`` (with ``digests``) to the store's rows of versions ``keys``: rows gone or
    changed removed, new or changed ones read and inserted. The count of rows changed, or None
    when the new vectors are of another size (a new index is built)."""
    assert index.digests is not None
    digests = {i: key_digest(k) for i, k in keys.items()}
    known = index.digests
    gone = [i for i, d in known.items() if digests.get(i) != d]
    gone += np.setdiff1d(index.ids, np.fromiter(digests, np.int64, len(digests))).tolist()
    added = [i for i, d in digests.items() if known.get(i) != d]
    loaded = store.load_vectors_of(scope, model, added) if added else None
    if added and (loaded is None or (len(loaded[0]) and loaded[1].shape[1] != index.dimensions)):
        return None
    index.remove(np.asarray(sorted(set(gone)), dtype=np.int64))
    for i in gone:
        known.pop(i, None)
    if loaded is not None and len(loaded[0]):
        index.upsert(*loaded)
        known.update((i, digests[i]) for i in loaded[0].tolist())
    index.generation = generation
    return len(set(gone)) + len(added)


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
    index.mirror(new)
    return index


def nearest(index: VectorIndex, vector: FloatMatrix, depth: int) -> list[tuple[int, float]]:
    """The index's candidates for ``vector`` with their cosines (the index's own float32 inner
    products of the stored rows: the scan's up to rounding), best first, ties by id."""
    labels, cosines = index.nearest(vector, depth)
    order = np.lexsort((labels, -cosines))
    return list(zip(labels[order].tolist(), cosines[order].tolist(), strict=True))


def cosines_of(
    ids: IdArray, vectors: FloatMatrix, vector: FloatMatrix
) -> tuple[IdArray, FloatMatrix]:
    """Exact cosines of the given rows, as (ascending ids, cosines): the keyword side's
    candidates, which the fusion scores by meaning too."""
    if not len(ids) or vectors.shape[1] != vector.shape[0]:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    return ids, row_dots(vectors, vector)
