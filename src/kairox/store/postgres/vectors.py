"""pgvector values: the text form written, the binary form sent as a query's parameter
(``VectorParam``), and the reader of ``kairox.store.vectors`` that selects them as ``real[]``."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from psycopg.adapt import Dumper
from psycopg.pq import Format

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


class VectorParam:
    """A query vector sent as a parameter in pgvector's binary form (``vector_payloads``): no
    text to format here nor parse on the server (the text literal of a 384-d vector costs more
    than a millisecond on a loaded machine). The statement casts it (``%(q)s::vector(384)``),
    which gives the parameter its type."""

    __slots__ = ("payload",)

    def __init__(self, vector: FloatMatrix) -> None:
        self.payload = vector_payloads(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]


class VectorParamDumper(Dumper):
    """``VectorParam``'s dumper: binary, of no declared type (the statement's cast decides)."""

    format = Format.BINARY

    def dump(self, obj: VectorParam) -> bytes:
        return obj.payload
