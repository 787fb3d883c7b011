"""Absolute relevance: every source scores a hit in [0, 1] on one scale, so hits from different
sources compare, and a floor can say "no evidence" without looking at the other hits.

Per-query min-max normalisation made the best hit of any query score 1.0, even a query nothing
matched. Here a score only depends on the hit and the query:

- Lexical evidence is a BM25 score measured against what the query could score: the sum of its
  words' IDFs (a word present once in a chunk of average length scores its IDF), and never less
  than one word found in a single chunk. All of a query's rare words present is 1.0; one common
  word of a long question is close to 0; no word present is 0.
- Semantic evidence is a cosine mapped through its embedder's calibration: at or below the cosine
  unrelated texts reach (``noise``) it is 0; at ``full`` it is 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_FLOOR = 0.2
"""The default ``[retrieval] min_score``: hits below it stay out of the context."""

_TINY = 1e-6


def fts5_idf(total: int, df: int) -> float:
    """The IDF SQLite FTS5's ``bm25()`` uses for a term in ``df`` of ``total`` rows."""
    value = math.log((total - df + 0.5) / (df + 0.5)) if total > 0 else 0.0
    return value if value > 0 else _TINY


def bm25_idf(total: int, df: int) -> float:
    """The (always positive) IDF of Lucene and tantivy."""
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


def bm25_evidence(score: float, idfs: Sequence[float], *, unique_idf: float) -> float:
    """A BM25 ``score`` as a fraction of the query's reference score, clipped to [0, 1].

    ``idfs`` are the query words' IDFs (absent words included); ``unique_idf`` is the IDF of a
    word found in one chunk, the least a query is measured against, so a query of only common
    words ("the") has little evidence even where every word is present.
    """
    if score <= 0:
        return 0.0
    reference = max(sum(idfs), unique_idf, _TINY)
    return min(1.0, score / reference)


def saturated(score: float, half: float) -> float:
    """An unbounded positive score (a remote BM25) as ``score / (score + half)``."""
    return score / (score + half) if score > 0 else 0.0


@dataclass(frozen=True, slots=True)
class CosineScale:
    """Where an embedder's cosines stop being noise (``noise``) and where they are certain."""

    noise: float
    full: float

    def evidence(self, cosine: float) -> float:
        if cosine <= self.noise:
            return 0.0
        return min(1.0, (cosine - self.noise) / (self.full - self.noise))


# Measured on BEIR SciFact (bench/retrieval_quality.py): unrelated query/passage pairs of
# all-MiniLM-L6-v2 rarely pass 0.2, relevant ones sit around 0.5-0.7.
_KNOWN_SCALES = {
    "sentence-transformers:all-MiniLM-L6-v2": CosineScale(noise=0.2, full=0.7),
}
_DEFAULT_SEMANTIC = CosineScale(noise=0.25, full=0.75)


NO_EVIDENCE = CosineScale(noise=1.0, full=2.0)
"""The scale of a lexical embedder (``hashing``): its cosines are never evidence of their own.
One shared word and one hash collision give the same cosine, and every shared word is already
in BM25's score."""


def cosine_scale(model_id: str) -> CosineScale:
    """The calibration of an embedder's cosines."""
    if model_id.startswith("hashing:"):
        return NO_EVIDENCE
    return _KNOWN_SCALES.get(model_id, _DEFAULT_SEMANTIC)


def clip(score: float) -> float:
    """A source's score on the shared scale: NaN and negatives are 0, above 1 is 1."""
    if score != score or score <= 0:  # NaN
        return 0.0
    return min(1.0, score)
