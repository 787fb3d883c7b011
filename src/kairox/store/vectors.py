"""Vectors as the SQLite stores keep them: a little-endian float32 blob per row, and its width."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def vector_blobs(
    ids: Sequence[int], vectors: npt.NDArray[np.float32], *, what: str
) -> list[tuple[int, int, bytes]]:
    """``(id, dims, blob)`` per row of ``vectors``; a matrix whose rows don't match ``ids`` is
    a ValueError naming ``what`` the ids are (``chunk``, ``unit``)."""
    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    if matrix.ndim != 2 or matrix.shape[0] != len(ids):
        raise ValueError(f"{len(ids)} {what} ids but vectors of shape {matrix.shape}")
    dims = int(matrix.shape[1])
    return [(i, dims, row.tobytes()) for i, row in zip(ids, matrix, strict=True)]
