"""A ranker's approximate vector indexes (``kairox.retrieval.ann``), one per (scope, model): when
one is used, built, loaded, caught up and saved.

From ``SearchOptions.ann_min_rows`` rows on (where hnswlib is installed) a scope's vector side
walks its index instead of scanning the matrix:
  * a store that saves indexes (``kairox.store.vector_index_files``) and has per-row versions:
    the first search of a fresh process loads the saved index (checked against a sample of the
    store's rows) and catches it up with the rows changed since, without reading the scope's
    matrix at all; an index that is stale in memory is caught up the same way;
  * otherwise a scope's second search in a process starts building the index from the matrix
    on a background thread (until it is ready searches scan the matrix exactly), and a built
    index is saved where the store keeps them, so the next process loads it.
A saved index that is missing, of another format, unreadable or not the store's is rebuilt (one
line in the log); it is derived data, never a result. ``warm`` builds or catches up now (after
``kairox index``), so a one-shot search afterwards finds it saved.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from kairox.retrieval import ann
from kairox.retrieval.background_build import SecondAskBuilds
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.vectors import Matrix
from kairox.store.protocols import RankStore, VectorDelta
from kairox.store.vector_index_files import IndexFiles, VectorIndexFiles
from kairox.store.vectors import IdArray

log = logging.getLogger(__name__)

SAVE_CHANGES = 500
"""Rows changed since an index was loaded or saved before it is saved again (and at least 1% of
it): a few changes are caught up at load more cheaply than the whole index is written again."""

Key = tuple[str, str]


class ApproximateIndexes:
    """Each scope's approximate index for one ranker; ``matrix``/``generation``/``forget_matrix``
    are the ranker's (its in-memory matrix of a scope, the scope's generation, and dropping
    the matrix once an index stands in for it)."""

    def __init__(
        self,
        store: RankStore,
        model: Callable[[], str],
        min_rows: int,
        matrix: Callable[[str], Matrix],
        generation: Callable[[str], int],
        forget_matrix: Callable[[str], None],
    ) -> None:
        self.store = store
        self._model = model
        self.min_rows = min_rows
        self._matrix = matrix
        self._generation = generation
        self._forget_matrix = forget_matrix
        self._indexes: dict[Key, ann.VectorIndex] = {}
        self._mirrored: dict[Key, Matrix] = {}  # what an index of a store without versions mirrors
        self._unsaved: dict[Key, int] = {}
        self._tried_saved: set[Key] = set()
        self._where: dict[Key, IndexFiles | None] = {}
        self._none_saved: dict[Key, int] = {}  # the generation at which none was saved
        self._builds = SecondAskBuilds("approximate vector index")
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        # Checked once: a Protocol's isinstance costs tens of microseconds, each search asked it.
        self._versioned = isinstance(store, VectorDelta)

    def _key(self, scope: str) -> Key:
        return (scope, self._model())

    def _files(self, scope: str) -> IndexFiles | None:
        """Where the scope's index is saved (worked out once: a search asks every time)."""
        key = self._key(scope)
        if key not in self._where:
            store = self.store
            found = store.vector_index_files(*key) if isinstance(store, VectorIndexFiles) else None
            self._where[key] = found
        return self._where[key]

    def _caught_up_here(self, scope: str, key: Key) -> bool:
        """Whether an index can be made ready in the search's own thread without the matrix:
        one in memory or saved, on a store with versions."""
        if not self._versioned:
            return False
        if key in self._indexes:
            return True
        if key in self._tried_saved or self._none_saved.get(key) == self._generation(scope):
            return False
        files = self._files(scope)
        if files is not None and files.path(".npz").is_file():
            return True
        self._none_saved[key] = self._generation(scope)  # looked once per generation
        return False

    def saved(self, scope: str) -> bool:
        """Whether the store keeps a saved index of the scope, or keeps none at all (then there
        is nothing to save ahead of a search)."""
        files = self._files(scope)
        return files is None or not files.writable or files.path(".npz").is_file()

    def warm(self, scope: str, *, changed: bool) -> None:
        """Build, load or catch up the scope's index now and leave it saved; unless
        ``changed``, only when no index is saved yet."""
        if not changed and self.saved(scope):
            return
        index = self.build(scope)
        if index is not None and not self.saved(scope):
            self._save(scope, self._key(scope), index, 0, True)

    def ready(self, scope: str) -> ann.VectorIndex | None:
        """The scope's index, up to date, when the vector side should walk it; None to scan the
        matrix exactly (a background build may have been started)."""
        if self.min_rows >= 1 << 62 or not ann.available():  # exact only: no index loaded
            return None
        key = self._key(scope)
        generation = self._generation(scope)
        with self._lock:
            index = self._indexes.get(key)
        if index is not None and index.generation == generation:
            return index
        if self._caught_up_here(scope, key):
            return self.build(scope)
        if len(self._matrix(scope).ids) < self.min_rows:
            return None
        self._builds.ask(key, scope, lambda: self.build(scope))
        return None

    def build(self, scope: str) -> ann.VectorIndex | None:
        """The scope's index now (blocking): the one in memory or saved, caught up with the
        store, else built from the matrix; saved when new or changed enough. None below
        ``min_rows`` rows or without hnswlib."""
        if not ann.available():
            return None
        with self._build_lock:
            key = self._key(scope)
            generation = self._generation(scope)
            with self._lock:
                index = self._indexes.get(key)
            if index is not None and index.generation == generation:
                return index
            if index is None and key not in self._tried_saved:
                self._tried_saved.add(key)
                index = self._load(scope, generation)
            changed, new = 0, False
            if index is not None and index.generation != generation:
                index, changed = self._caught_up(scope, key, index, generation)
            if index is None:
                matrix = self._matrix(scope)
                if len(matrix.ids) < self.min_rows:
                    return None
                index, new = ann.VectorIndex.build(matrix), True
                if index.digests is None:
                    self._mirrored[key] = matrix
            with self._lock:
                if len(index) < self.min_rows:
                    self._indexes.pop(key, None)
                    return None
                self._indexes[key] = index
            if index.digests is not None:
                self._forget_matrix(scope)  # the index holds the rows: no second copy
            self._save(scope, key, index, changed, new)
            return index

    def _load(self, scope: str, generation: int) -> ann.VectorIndex | None:
        """The saved index, when it reads and is the store's. One saved at another generation
        is caught up by the rows' versions (a row whose version differs is read again, so
        that also holds for another database's rows); one saved at this generation is trusted
        when a sample of its rows are the store's (not a database made anew beside it)."""
        files, store = self._files(scope), self.store
        if files is None or not isinstance(store, VectorDelta):
            return None
        index = ann.VectorIndex.load(files)
        if index is None:
            return None
        if index.digests is None or (
            index.generation == generation and not ann.agrees(index, store, scope, self._model())
        ):
            log.warning("saved vector index %s is not this store's: rebuilt", files.path(".npz"))
            return None
        return index

    def _caught_up(
        self, scope: str, key: Key, index: ann.VectorIndex, generation: int
    ) -> tuple[ann.VectorIndex | None, int]:
        """``index`` brought to the store's rows at ``generation`` and the rows changed; None
        when it cannot be (rows of another size, or an index of a store without versions
        whose matrix is not known): a new one is built."""
        store = self.store
        if index.digests is not None and isinstance(store, VectorDelta):
            keys = dict(store.vector_keys(scope, self._model()))
            changed = ann.caught_up_keys(index, store, scope, self._model(), keys, generation)
            return (index, changed) if changed is not None else (None, 0)
        old = self._mirrored.get(key)
        if old is None:
            return None, 0
        matrix = self._matrix(scope)
        caught = ann.caught_up(index, old, matrix)
        if caught is not None:
            self._mirrored[key] = matrix
        return caught, 0

    def _save(self, scope: str, key: Key, index: ann.VectorIndex, changed: int, new: bool) -> None:
        """Save a new index, or one changed enough since it was loaded or saved."""
        files = self._files(scope)
        if files is None or not files.writable or index.digests is None:
            return
        unsaved = self._unsaved[key] = self._unsaved.get(key, 0) + changed
        if not new and unsaved < max(SAVE_CHANGES, len(index) // 100):
            return
        try:
            index.save(files)
        except OSError as exc:
            log.warning(
                "vector index not saved in %s (%s): built again next time", files.folder, exc
            )
            return
        self._unsaved[key] = 0

    def cosines_of(
        self, index: ann.VectorIndex, ids: list[int], vector: FloatMatrix
    ) -> tuple[IdArray, FloatMatrix]:
        """Exact cosines of those of ``ids`` the index holds, from its rows: the keyword side's
        candidates, which the fusion scores by meaning too."""
        held = index.held(np.unique(np.asarray(ids, dtype=np.int64)))
        return ann.cosines_of(held, index.rows(held), vector)

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()
            self._mirrored.clear()
