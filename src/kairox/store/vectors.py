"""Stored vectors as NumPy: the array types, and the one reader each backend has.

Every vector table (workspace chunks, history units, memory units) is read the same way: rows of
``id``, ``dims`` and ``vec``, by id, turned into an id array and a float32 matrix. A backend
differs only in how it selects the vector (``column``) and decodes it (``decode``): SQLite keeps
little-endian float32 BLOBs (``SQLITE_VECTORS``), Postgres pgvector values read as ``real[]``
(``kairox.store.postgres.vectors.PG_VECTORS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kairox.store.sql import SqlRow

FloatMatrix = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]


def no_vectors() -> tuple[IdArray, FloatMatrix]:
    return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)


def one_per_id(ids: Sequence[int], vectors: FloatMatrix) -> FloatMatrix:
    """``vectors`` as a contiguous little-endian float32 matrix, checked to hold one row per id
    (what every vector table is written from)."""
    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    if matrix.ndim != 2 or matrix.shape[0] != len(ids):
        raise ValueError(f"{len(ids)} ids but vectors of shape {matrix.shape}")
    return matrix


@dataclass(frozen=True, slots=True)
class VectorReader:
    """One backend's way to read vectors. ``column`` is the SQL selecting the vector of the
    table aliased ``v`` (select it ``AS vec``, beside ``id`` and ``dims``); ``decode`` turns rows
    of one size into a matrix."""

    column: str
    decode: Callable[[Sequence[SqlRow], int], FloatMatrix]

    def newest(self, rows: Sequence[SqlRow]) -> tuple[IdArray, FloatMatrix]:
        """The rows (by id) of the last row's size. A backend that changed its output size under
        the same model id leaves vectors of two sizes: the newest shape is used, and the other
        rows fall back to keyword search until they are re-embedded."""
        if not rows:
            return no_vectors()
        dims = int(rows[-1]["dims"])
        return self._matrix([r for r in rows if int(r["dims"]) == dims], dims)

    def one_size(self, rows: Sequence[SqlRow]) -> tuple[IdArray, FloatMatrix] | None:
        """The rows (by id) as a matrix; None when they are not all one size."""
        if not rows:
            return no_vectors()
        sizes = {int(r["dims"]) for r in rows}
        return self._matrix(rows, sizes.pop()) if len(sizes) == 1 else None

    def _matrix(self, rows: Sequence[SqlRow], dims: int) -> tuple[IdArray, FloatMatrix]:
        ids = np.fromiter((int(r["id"]) for r in rows), dtype=np.int64, count=len(rows))
        return ids, self.decode(rows, dims)


def _blobs(rows: Sequence[SqlRow], dims: int) -> FloatMatrix:
    """float32 BLOBs, joined and read in one go (100k vectors load in well under a second)."""
    blob = b"".join(r["vec"] for r in rows)
    return np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dims)


SQLITE_VECTORS = VectorReader("v.vector", _blobs)
