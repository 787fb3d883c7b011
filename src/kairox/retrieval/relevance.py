"""Absolute relevance: every source scores a hit in [0, 1] on one scale, so hits from different
sources compare, and a floor can say "no evidence" without looking at the other hits.

Per-query min-max normalisation made the best hit of any query score 1.0, even a query nothing
matched. Here a score only depends on the hit and the query:

- Lexical evidence is the share of the query's content words (stopwords aside) a passage holds,
  each word weighted by its IDF in that source (the smooth, always positive IDF of Lucene, so a
  corpus of three files still has evidence). All of them present is 1.0; one common word of a
  long question is close to 0; none is 0, and a query of only stopwords has no evidence.
- Semantic evidence is a cosine mapped through its embedder's calibration: at or below the cosine
  unrelated texts reach (``noise``) it is 0; at ``full`` it is 1.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # NumPy is imported where used: ``kairox memory list`` imports this module
    import numpy as np
    import numpy.typing as npt

from kairox.store.terms import bm25_idf
from kairox.store.words import is_ngram, lookup

DEFAULT_FLOOR = 0.2
"""The default ``[retrieval] min_score``: hits below it stay out of the context."""

_TINY = 1e-6


_STOPWORDS = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    many much tell please also get got let lets s t"""
STOPWORDS = frozenset(_STOPWORDS.split())
"""English function words: in a small corpus their IDF cannot tell them from content words."""

Stemmer = Callable[[Sequence[str]], list[str]]


def weighed(stem: str, df: int) -> bool:
    """Whether a query term counts towards the evidence a hit is measured against. A CJK bigram
    found in no passage does not: a question's bigrams include every pair of characters that
    straddles two words (``用什``, ``么数`` in ``我们用什么数据库``), which are in no text, and at
    the highest IDF they would outweigh the words that are. Any other absent word counts (a
    query about what the source does not hold has less evidence)."""
    return df > 0 or not is_ngram(stem)


@dataclass(frozen=True, slots=True)
class LexicalEvidence:
    """One query's content words (as stems) with their IDF weights in one source."""

    weights: Mapping[str, float]
    reference: float
    stemmer: Stemmer
    prefixes: tuple[str, ...] | None = None

    @classmethod
    def build(
        cls, words: Sequence[str], stemmer: Stemmer, df: Callable[[list[str]], Mapping[str, int]],
        total: int, *, porter: bool = False,
    ) -> LexicalEvidence:  # fmt: skip
        """``words`` are the query's words, ``df`` gives stems' document frequencies among
        ``total`` passages. ``porter`` says ``stemmer`` is the original Porter algorithm (FTS5's
        ``porter`` tokenizer), which only rewrites a word's last letters: an ASCII word whose
        stem is S starts with S minus its last letter, so ``of`` stems only those words."""
        content = [w for w in words if w not in STOPWORDS]
        stems = list(dict.fromkeys(stemmer(content))) if content else []
        return cls.of_stems(stems, stemmer, df(stems) if stems else {}, total, porter=porter)

    @classmethod
    def of_stems(
        cls, stems: Sequence[str], stemmer: Stemmer, counts: Mapping[str, int], total: int, *,
        porter: bool = False,
    ) -> LexicalEvidence:  # fmt: skip
        """``build`` from the content words' ``stems`` (in order) and their document
        frequencies ``counts`` (a search that has them already looks nothing up again)."""
        weights: dict[str, float] = {}
        for stem in stems:
            count = counts.get(stem, 0)
            if stem not in weights and weighed(stem, count):
                weights[stem] = bm25_idf(total, count)
        reference = max(sum(weights.values()), reference_idf(total)) if weights else 0.0
        prefixes = tuple(stem[:-1] for stem in weights) if porter else None
        return cls(weights, reference, stemmer, prefixes)

    @property
    def candidates(self) -> re.Pattern[str] | None:
        """The words of a lower-cased ASCII text that start with one of ``prefixes``, found in
        one scan instead of splitting the text and testing each word; None without ASCII
        prefixes. Compiled on first use: a search whose hits' evidence comes from the keyword
        index's postings never scans a text, and compiling took longer than its ranking."""
        if self.prefixes is None:
            return None
        return _candidate_words(self.prefixes)

    def of(self, text: str) -> float:
        """The share of the query's weighted content words that ``text`` holds."""
        if not self.weights:
            return 0.0
        candidates = self.candidates if text.isascii() else None
        if candidates is not None:
            # ``words`` of an ASCII text are its runs of letters and digits, lower-cased
            matched = set(candidates.findall(text.lower()))
            return self.share(set(self.stemmer(list(matched))) if matched else set())
        held = lookup(text)
        words = list(set(held.others))
        if self.prefixes is not None:  # the other words cannot stem to a query word
            prefixes = self.prefixes
            words = [w for w in words if w.startswith(prefixes) or not w.isascii()]
        present = set(self.stemmer(words)) if words else set()
        present.update(s for s in self.weights if is_ngram(s) and held.has_ngram(s))
        return self.share(present)

    def share(self, held: Collection[str]) -> float:
        """The share of the query's weighted content words among ``held``, the stems a passage
        holds (``of`` finds them in its text; a keyword index's postings also know them)."""
        if not self.weights:
            return 0.0
        found = 0.0  # added in the weights' order, as ``shares`` adds them
        for stem, weight in self.weights.items():
            if stem in held:
                found += weight
        return min(1.0, found / self.reference)

    def shares(self, held: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        """``share`` of each row of ``held``, whose columns say whether a passage holds each
        weighted stem (in the weights' order): the same sums, added in the same order."""
        import numpy as np

        found = np.zeros(held.shape[0], dtype=np.float64)
        if not self.weights:
            return found
        for column, weight in enumerate(self.weights.values()):
            found[held[:, column]] += weight
        shares: npt.NDArray[np.float64] = np.minimum(1.0, found / self.reference)
        return shares

    @property
    def ascii(self) -> bool:
        """Whether every weighted word is ASCII. Then the stems a keyword index (FTS5's porter
        tokens of ``words``) says a passage holds bound what ``of`` finds in it: a word that
        makes no FTS5 token stands for itself in ``of`` and is never ASCII, and every other
        word's stem is one of its tokens. For an ASCII text they are exactly what ``of`` finds
        (each ASCII word is one token, its stem)."""
        return all(stem.isascii() for stem in self.weights)


@functools.lru_cache(maxsize=256)
def _candidate_words(prefixes: tuple[str, ...]) -> re.Pattern[str] | None:
    if not all(p.isascii() for p in prefixes):
        return None
    alternatives = "|".join(re.escape(p) for p in sorted(set(prefixes), key=len))
    return re.compile(f"(?<![a-z0-9])(?:{alternatives})[a-z0-9]*")


COMMON_SHARE = 0.05
"""A word in this share of a source's passages is common (the keyword side's speed device
starts at the same share, ``SearchOptions.drop_common_fraction``)."""


@functools.lru_cache(maxsize=64)
def reference_idf(total: int) -> float:
    """The least a query's words are measured against in a source of ``total`` passages: the
    IDF of a word in ``COMMON_SHARE`` of them (at least one). A query whose words are that
    common and all present is full evidence ("attention mask" in a code base where both words
    are in 10% of the chunks finds its masking code); a word in most passages ("the", or
    "file" in nine chunks of ten) stays little evidence even where it is present."""
    return bm25_idf(total, max(1, round(COMMON_SHARE * total)))


def bm25_evidence(score: float, idfs: Sequence[float], *, reference_idf: float) -> float:
    """A BM25 ``score`` as a fraction of the query's reference score, clipped to [0, 1].

    ``idfs`` are the query words' IDFs (absent words included); ``reference_idf``
    (``reference_idf(total)``) is the least a query is measured against, so a query of only
    very common words has little evidence even where every word is present.
    """
    if score <= 0:
        return 0.0
    reference = max(sum(idfs), reference_idf, _TINY)
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
