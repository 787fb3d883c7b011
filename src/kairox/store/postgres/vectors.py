"""pgvector values: the text form written, and the reader of ``kairox.store.vectors`` that
selects them as ``real[]``."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from kairox.store.sql import SqlRow
from kairox.store.vectors import FloatMatrix, VectorReader


def vector_literal(row: Sequence[float] | FloatMatrix) -> str:
    """pgvector's text form of one vector."""
    return "[" + ",".join(repr(float(x)) for x in row) + "]"


def _arrays(rows: Sequence[SqlRow], dims: int) -> FloatMatrix:
    return np.asarray([r["vec"] for r in rows], dtype=np.float32).reshape(len(rows), dims)


PG_VECTORS = VectorReader("v.embedding::real[]", _arrays)


def vector_payloads(matrix: FloatMatrix) -> list[bytes]:
    """Each row in pgvector's binary form (``COPY ... FORMAT BINARY``): its size and a zero as
    big-endian 16-bit numbers, then big-endian float32s."""
    rows, dims = matrix.shape
    header = struct.pack(">HH", dims, 0)
    big = np.ascontiguousarray(matrix, dtype=">f4")
    return [header + big[i].tobytes() for i in range(rows)]
