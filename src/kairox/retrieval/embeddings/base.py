"""The ``EmbeddingBackend`` protocol every embedder implements, plus the helpers they share.

A backend turns texts into an ``(n, d)`` float32 matrix whose rows are L2-normalised, so cosine
similarity is a dot product everywhere in retrieval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]


@runtime_checkable
class EmbeddingBackend(Protocol):
    """Turns texts into unit vectors. ``model_id`` keys stored vectors: change it, re-embed."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return a float32 array of shape ``(len(texts), dimensions)`` with unit-norm rows."""
        ...


def l2_normalise(matrix: npt.NDArray[np.floating]) -> FloatMatrix:
    """Scale each row to unit length; an all-zero row stays zero rather than becoming NaN."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d matrix, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


def empty_matrix(dimensions: int) -> FloatMatrix:
    return np.zeros((0, dimensions), dtype=np.float32)
