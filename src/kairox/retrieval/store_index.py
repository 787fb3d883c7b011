"""The approximate vector index a store keeps itself (``IndexedVectors``: pgvector HNSW on
Postgres) as a ranker's vector side.

Where ``retrieval.ann`` builds an hnswlib graph in each process beside the scope's matrix, such a
store keeps one graph for every process and machine: a scope with ``ann_min_rows`` rows whose
index is ready is searched by asking the store, and the ranker holds no matrix for it. A scope
with the rows but no index yet gets it built on a background thread from its second search in a
process (as the in-process index is); searches scan the matrix exactly until then. Whether a
scope is served is asked of the store once per generation of the scope.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from kairox.retrieval.background_build import SecondAskBuilds
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.store.protocols import IndexedVectors
from kairox.store.vectors import IdArray

Keyword = list[tuple[int, float]]


class StoreIndexes:
    """One ranker's view of its store's indexes, by (scope, model)."""

    def __init__(
        self,
        store: IndexedVectors,
        model: Callable[[], str],
        min_rows: Callable[[], int],
        generation: Callable[[str], int],
        forget_matrix: Callable[[str], None],
    ) -> None:
        self.store = store
        self._model = model
        self._min_rows = min_rows
        self._generation = generation
        self._forget_matrix = forget_matrix
        self._lock = threading.Lock()
        # (scope, model) -> (generation, the ready index's vector size or None, rows)
        self._known: dict[tuple[str, str], tuple[int, int | None, int]] = {}
        self._builds = SecondAskBuilds("the store's vector index")
        self._walks: ThreadPoolExecutor | None = None

    def dims(self, scope: str) -> int | None:
        """The vector size of the scope's ready index when searches should use it; None to scan
        the matrix (starting the build from the second such search of a big scope)."""
        key = (scope, self._model())
        generation = self._generation(scope)
        with self._lock:
            known = self._known.get(key)
        if known is None or known[0] != generation:
            state = self.store.vector_index(scope, key[1])
            known = (generation, state.dims, state.rows)
            with self._lock:
                self._known[key] = known
        _, dims, rows = known
        if rows < self._min_rows():
            return None
        if dims is None:
            self._builds.ask(key, scope, lambda: self.build(scope))
        return dims

    def build(self, scope: str) -> int | None:
        """Have the store build the scope's index now (blocking, from ``ann_min_rows`` rows):
        its vector size, or None when none was built. The scope's matrix is let go."""
        key = (scope, self._model())
        generation = self._generation(scope)
        state = self.store.vector_index(scope, key[1])
        if state.rows < self._min_rows():
            return None
        dims = self.store.build_vector_index(scope, key[1])
        with self._lock:
            self._known[key] = (generation, dims, state.rows)
        self._forget_matrix(scope)
        return dims

    def sides(
        self,
        scope: str,
        asked: FloatMatrix,
        dims: int,
        depth: int,
        keyword: Callable[[], Keyword],
    ) -> tuple[Keyword, Keyword, IdArray, FloatMatrix]:
        """(keyword candidates, nearest vectors, keyword candidates' ids and cosines). The
        server walks its graph while this thread ranks the keyword side (the walk waits on a
        socket, so the two overlap), then the keyword candidates' cosines are one more round
        trip."""
        model = self._model()
        walk = None
        if asked.shape[0] == dims:
            walk = self._walker().submit(self.store.nearest_vectors, scope, model, asked, depth)
        found = keyword()
        vector: Keyword = []
        ids, cosines = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if walk is not None:
            if found:
                ids, cosines = self.store.vector_cosines(scope, model, asked, [c for c, _ in found])
            vector = walk.result()
        return found, vector, ids, cosines

    def _walker(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._walks is None:
                self._walks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kairox-walk")
            return self._walks

    def clear(self) -> None:
        with self._lock:
            self._known.clear()

    def close(self) -> None:
        """Stop the threads waiting for nearest vectors, if any were started."""
        with self._lock:
            walks, self._walks = self._walks, None
        if walks is not None:
            walks.shutdown(wait=False)
