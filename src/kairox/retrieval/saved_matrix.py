"""A scope's vector matrix saved as files beside the database, so a fresh process reads it as one
memory-mapped array instead of a row per chunk.

Below ``SearchOptions.ann_min_rows`` the vector side scans the scope's matrix exactly, and a
fresh process (``kairox search``, a scripted ``send``) had to read it from the store first: at
100k chunks of 384 floats, 0.8-1.5 s of row reads, BLOB joins and version strings before the
first hit (``bench/fresh_search.py``), where the keyword side loads its saved index in 0.1 s.
From ``SearchOptions.saved_matrix_min_rows`` rows a matrix read from the store is saved where
the store keeps its vector indexes (``kairox.store.vector_index_files``; the SQLite chunk store):
the rows as a ``.npy`` under a fresh name, then a table naming it with the row ids, each row's
version and the scope's generation (replaced atomically, so a reader never pairs a table with
another save's rows). A fresh process maps the rows and:
  * at the same generation, trusts them once a sample of rows equals the store's (a database
    made anew beside old files reads as foreign);
  * at another generation, catches them up by the rows' versions like a matrix kept in memory
    (``retrieval.vectors.caught_up``): only the changed rows are read.
The files are derived data: a missing, older, foreign or unreadable one costs a read from the
store (one line in the log), never a result. Above ``ann_min_rows`` the saved HNSW index holds
the rows instead (``retrieval.ann_indexes``), so nothing is saved twice.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kairox.retrieval.vectors import Matrix, rows_agree
from kairox.store.protocols import RankStore, VectorDelta
from kairox.store.vector_index_files import (
    IndexFiles,
    VectorIndexFiles,
    named_file,
    publish,
    read_table,
)
from kairox.store.vectors import FloatMatrix, IdArray

log = logging.getLogger(__name__)

FORMAT = 1
"""Bump when the saved layout changes: older saved matrices are read from the store again."""
TABLE = ".matrix.npz"
SAVE_CHANGES = 500
"""Rows changed since the saved matrix before it is saved again (and at least 1% of it): a few
are caught up at load more cheaply than the whole matrix is written again."""


class SavedMatrices:
    """The saved matrices of one ranker's scopes (for ``model``'s vectors)."""

    def __init__(
        self, store: RankStore, model: Callable[[], str], saves: Callable[[int], bool]
    ) -> None:
        self.store = store
        self._model = model
        self._saves = saves  # whether a matrix of so many rows is saved
        self._unsaved: dict[tuple[str, str], int] = {}
        self._saved_at: dict[tuple[str, str], int] = {}

    def _files(self, scope: str) -> IndexFiles | None:
        store = self.store
        if not isinstance(store, VectorIndexFiles) or not isinstance(store, VectorDelta):
            return None
        return store.vector_index_files(scope, self._model())

    def load(self, scope: str, generation: int) -> Matrix | None:
        """The saved matrix of ``scope`` (its rows memory-mapped), or None when there is none
        usable; one saved at ``generation`` is checked against a sample of the store's rows."""
        files, store = self._files(scope), self.store
        if files is None or not isinstance(store, VectorDelta):
            return None
        matrix = read(files)
        if matrix is None:
            return None
        dims = matrix.vectors.shape[1]
        if matrix.generation == generation and not rows_agree(
            matrix.ids, lambda ids: _rows(matrix, ids), dims, store, scope, self._model()
        ):
            log.warning("saved vector matrix %s is not this store's: read again", files.path(TABLE))
            return None
        self._saved_at[(scope, self._model())] = matrix.generation
        if files.writable and not self._saves(len(matrix.ids)):
            remove(files)  # used this once (its rows stay mapped); the HNSW index holds them now
        return matrix

    def kept(self, scope: str, matrix: Matrix, changed: int) -> None:
        """``matrix`` is now the scope's (read in full when ``changed`` < 0, else caught up
        with ``changed`` rows): saved when read in full, or changed enough since the save; a
        saved one is removed once the scope is no size to save (an HNSW index holds it now)."""
        files, key, rows = self._files(scope), (scope, self._model()), len(matrix.ids)
        if files is None or not files.writable or matrix.keys is None:
            return
        if not self._saves(rows):
            remove(files)
            return
        if self._saved_at.get(key) == matrix.generation:
            return
        unsaved = self._unsaved[key] = self._unsaved.get(key, 0) + max(changed, 0)
        if changed >= 0 and unsaved < max(SAVE_CHANGES, rows // 100):
            return
        try:
            write(files, matrix)
        except OSError as exc:
            log.warning(
                "vector matrix not saved in %s (%s): read again next time", files.folder, exc
            )
            return
        self._unsaved[key] = 0
        self._saved_at[key] = matrix.generation

    def warm(self, scope: str, matrix: Matrix) -> None:
        """Leave ``matrix`` saved (after ``kairox index``) unless the saved one is of its
        generation already."""
        self.kept(scope, matrix, -1)


def _rows(matrix: Matrix, ids: IdArray) -> FloatMatrix:
    found: FloatMatrix = np.asarray(matrix.vectors[np.searchsorted(matrix.ids, ids)])
    return found


def write(files: IndexFiles, matrix: Matrix) -> None:
    """The rows under a fresh name, then the table naming them (atomically replaced), then the
    rows the old table named removed."""
    assert matrix.keys is not None
    keys = [matrix.keys.get(i, "") for i in matrix.ids.tolist()]
    if any("\n" in k for k in keys):
        raise OSError("a version holds a line break")  # a path with one: read from the store
    files.folder.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:12]
    rows = files.path(f".matrix.{token}.npy")
    np.save(rows, np.ascontiguousarray(matrix.vectors, dtype="<f4"))
    meta = {"format": FORMAT, "generation": matrix.generation}
    arrays: dict[str, npt.NDArray[Any]] = {
        "ids": matrix.ids,
        "keys": np.frombuffer("\n".join(keys).encode(), dtype=np.uint8),
    }
    publish(files.path(TABLE), rows, meta, arrays, key="rows", orphans=f"{files.stem}.matrix.*.npy")


def remove(files: IndexFiles) -> None:
    """The saved matrix's table, then its rows (a reader never finds a table without rows)."""
    table = files.path(TABLE)
    if not table.is_file():
        return
    rows = named_file(table, "rows")
    try:
        table.unlink(missing_ok=True)
        if rows is not None:
            (files.folder / Path(rows).name).unlink(missing_ok=True)
    except OSError as exc:  # a file another process has mapped, on a system that refuses
        log.warning("saved vector matrix %s not removed (%s)", table, exc)


def read(files: IndexFiles) -> Matrix | None:
    """The matrix ``write`` saved (rows memory-mapped, read-only), or None when there is none;
    one of another format or that does not read is reported in one line."""
    table = files.path(TABLE)
    if not table.is_file():
        return None
    try:
        found = read_table(table, FORMAT)
        if found is None:
            log.warning("saved vector matrix %s is of an older format: read again", table)
            return None
        meta, arrays = found
        ids = np.asarray(arrays["ids"], dtype=np.int64)
        keys = arrays["keys"].tobytes().decode().split("\n") if len(ids) else []
        vectors = np.load(files.folder / Path(str(meta["rows"])).name, mmap_mode="r")
        if len(keys) != len(ids) or vectors.ndim != 2 or vectors.shape[0] != len(ids):
            raise ValueError("its rows, ids and versions differ in number")
        if vectors.dtype != np.dtype("<f4"):
            raise ValueError(f"rows of {vectors.dtype}")
        if len(ids) > 1 and not bool((ids[1:] > ids[:-1]).all()):
            raise ValueError("ids out of order")
        versions = dict(zip(ids.tolist(), keys, strict=True))
        return Matrix(int(meta["generation"]), ids, vectors, versions)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        log.warning("saved vector matrix %s does not read (%s): read again", table, exc)
        return None
