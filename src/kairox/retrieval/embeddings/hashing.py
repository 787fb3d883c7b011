"""The ``hashing`` embedder: deterministic, offline, dependency-free, and the default.

Signed feature hashing of lower-cased word unigrams and bigrams into ``dimensions`` buckets
(CRC-32, so every process and platform agrees). It captures lexical overlap, not meaning: search
uses it only to break ties and fill in behind BM25 (see ``kairox.retrieval.search``).
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Sequence

import numpy as np

from kairox.retrieval.embeddings.base import FloatMatrix, empty_matrix, l2_normalise

DEFAULT_DIMENSIONS = 384
_WORD = re.compile(r"[^\W_]+")
# A text with no words still gets a unit vector: it hashes this one sentinel feature.
_EMPTY_FEATURE = b"\x00<empty>"


class HashingEmbedder:
    """Signed feature hashing of word unigrams and bigrams, L2-normalised."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        if dimensions < 8:
            raise ValueError("hashing embedder needs at least 8 dimensions")
        self._dimensions = dimensions

    @property
    def model_id(self) -> str:
        return f"hashing:{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self._dimensions)
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._embed_one(text)
        return l2_normalise(out)

    def _embed_one(self, text: str) -> FloatMatrix:
        words = _WORD.findall(text.lower())
        features = [w.encode() for w in words]
        features.extend(f"{a} {b}".encode() for a, b in itertools.pairwise(words))
        if not features:
            features = [_EMPTY_FEATURE]
        hashes = np.fromiter(
            (zlib.crc32(f) for f in features), dtype=np.uint32, count=len(features)
        )
        buckets = (hashes % np.uint32(self._dimensions)).astype(np.intp)
        signs = np.where(hashes >> np.uint32(31), -1.0, 1.0)
        return np.bincount(buckets, weights=signs, minlength=self._dimensions).astype(np.float32)
