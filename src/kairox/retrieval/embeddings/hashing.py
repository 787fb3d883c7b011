"""The ``hashing`` embedder: deterministic, offline, dependency-free, and the default.

Signed feature hashing of word unigrams and bigrams into ``dimensions`` buckets (the words of
``kairox.store.words``: lower-cased, Chinese, Japanese and Korean as character bigrams). Words
hash with CRC-32 (so every process and platform agrees); a bigram combines its two word hashes, and
every feature goes through the murmur3 finaliser before picking a bucket and a sign. It captures
lexical overlap, not meaning: search uses it only to break ties and fill in behind BM25.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kairox.retrieval.embeddings.base import FloatMatrix, empty_matrix, l2_normalise
from kairox.store.words import words as split_words

DEFAULT_DIMENSIONS = 384
_MASK = np.uint64(0xFFFFFFFF)
# A text with no words still gets a unit vector: it hashes this one sentinel feature.
_EMPTY_FEATURE = np.array([zlib.crc32(b"\x00<empty>")], dtype=np.uint64)
_CACHE_LIMIT = 200_000

U64 = npt.NDArray[np.uint64]


def _fmix32(h: U64) -> U64:
    h = h ^ (h >> np.uint64(16))
    h = (h * np.uint64(0x85EBCA6B)) & _MASK
    h = h ^ (h >> np.uint64(13))
    h = (h * np.uint64(0xC2B2AE35)) & _MASK
    return h ^ (h >> np.uint64(16))


class HashingEmbedder:
    """Signed feature hashing of word unigrams and bigrams, L2-normalised."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        if dimensions < 8:
            raise ValueError("hashing embedder needs at least 8 dimensions")
        self._dimensions = dimensions
        self._word_hashes: dict[str, int] = {}

    @property
    def model_id(self) -> str:
        return f"hashing:{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self._dimensions)
        features = [self._features(text) for text in texts]
        rows = np.repeat(np.arange(len(texts)), [len(f) for f in features])
        hashed = _fmix32(np.concatenate(features))
        buckets = (hashed % np.uint64(self._dimensions)).astype(np.int64)
        signs = np.where(hashed & np.uint64(1 << 31), -1.0, 1.0)
        flat = np.bincount(
            rows * self._dimensions + buckets,
            weights=signs,
            minlength=len(texts) * self._dimensions,
        )
        return l2_normalise(flat.astype(np.float32).reshape(len(texts), self._dimensions))

    def _features(self, text: str) -> U64:
        """Unigram and bigram hashes; 2n-1 features for n words, an odd count, never all cancel."""
        words = split_words(text)
        if not words:
            return _EMPTY_FEATURE
        cache = self._word_hashes
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        hashes = []
        for word in words:
            value = cache.get(word)
            if value is None:
                value = cache[word] = zlib.crc32(word.encode("utf-8", "surrogatepass"))
            hashes.append(value)
        unigrams = np.array(hashes, dtype=np.uint64)
        bigrams = (unigrams[:-1] * np.uint64(0x9E3779B1) + unigrams[1:] + np.uint64(1)) & _MASK
        return np.concatenate([unigrams, bigrams])
