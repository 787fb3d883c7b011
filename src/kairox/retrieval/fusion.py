"""How hybrid search merges its two candidate lists: the fusion methods and their knobs, the
absolute evidence a hit reports, and the merge itself (``fuse``). ``kairox.retrieval.search``
holds the rankers that feed it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.relevance import CosineScale
from kairox.store.vectors import IdArray

# (chunk id, fused score, bm25, cosine), best first
Ranked = list[tuple[int, float, float | None, float | None]]


class FusionMethod(StrEnum):
    AUTO = "auto"  # lexical-first for a lexical embedder, min-max otherwise
    LEXICAL_FIRST = "lexical-first"  # BM25 order; vectors break exact ties and fill in
    CALIBRATED = "calibrated"  # weighted sum of the absolute lexical and semantic evidence
    MINMAX = "minmax"  # weighted sum of per-list min-max normalised scores
    RRF = "rrf"  # reciprocal rank fusion
    BM25 = "bm25"
    VECTOR = "vector"


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """Knobs of the hybrid search; the defaults are the ones the SciFact bench chose.

    ``bench/retrieval_quality.py`` (nDCG@10): BM25 0.695, MiniLM 0.650, min-max 0.5 fusion 0.738,
    RRF 0.728; with ``hashing``, min-max 0.599 and RRF 0.485 fall below BM25, so AUTO uses
    lexical-first (0.695). Dropping >5% terms from the query cost 0.034 (BM25) / 0.015 (hybrid);
    they now only stop gathering candidates and rescore the ones rarer words gather (0.695 against
    0.694 for every word, forced on at SciFact's size), from ``drop_min_chunks`` on, where leaving
    their postings out takes the keyword side at 100k chunks from ~160 ms to ~8-10 ms
    (``bench/retrieval_speed.py``).
    """

    fusion: FusionMethod = FusionMethod.AUTO
    candidates: int = 100
    bm25_weight: float = 0.5
    rrf_k: int = 60
    drop_common_fraction: float = 0.05
    drop_min_chunks: int = 20_000
    # From this many vectors in a scope the vector side walks an HNSW index (``retrieval.ann``,
    # saved on SQLite) instead of scanning every row. At 100k (bench/ann_saved.py) the saved
    # index made a fresh process's first hits 5-6x sooner, the vector side 27-34x and hybrid
    # search about 2x faster with recall@10 0.996-1.000, at half the RSS; below that the exact
    # scan is a few ms and the build (0.35 ms a row on a quiet machine) buys little.
    ann_min_rows: int = 100_000
    # From this many vectors (and below ``ann_min_rows``) a scope's matrix read from the store is
    # saved as a file beside a SQLite database (``retrieval.saved_matrix``), so a fresh process
    # maps it instead of reading every row: at 100k chunks ~1 s of reads before the first hit.
    saved_matrix_min_rows: int = 10_000


@dataclass(frozen=True, slots=True)
class Evidence:
    """Turns one query's raw scores into absolute evidence in [0, 1]."""

    idfs: tuple[float, ...]
    reference_idf: float
    semantic: CosineScale
    reference: float = field(init=False)  # ``bm25_evidence``'s, computed once per query

    def __post_init__(self) -> None:
        object.__setattr__(self, "reference", max(sum(self.idfs), self.reference_idf, 1e-6))

    def lexical(self, bm25: float | None) -> float:
        """``bm25_evidence(bm25, idfs, reference_idf=...)``."""
        return 0.0 if bm25 is None or bm25 <= 0 else min(1.0, bm25 / self.reference)

    def cosine(self, cosine: float | None) -> float:
        return 0.0 if cosine is None else self.semantic.evidence(cosine)


def fuse(
    method: FusionMethod,
    keyword: list[tuple[int, float]],
    vector: list[tuple[int, float]],
    ids: IdArray,
    cosines: FloatMatrix,
    options: SearchOptions,
    evidence: Evidence,
    boost: dict[int, float] | None = None,
    want: int | None = None,
) -> Ranked:
    """Merge the two candidate lists into (chunk id, ranking score, bm25, cosine), best first.
    ``HybridSearcher`` gives the hits their absolute scores. ``boost`` (lexical-first
    and min-max only) is added to a candidate's normalised score before ordering. With
    ``want``, the list may stop once its first ``want`` are certain (lexical-first)."""
    bm25 = dict(keyword)
    cos = dict(vector)
    # Every keyword hit's cosine, found in one vectorised lookup.
    missing = [cid for cid, _ in keyword if cid not in cos]
    if missing and len(ids):
        wanted = np.asarray(missing, dtype=np.int64)
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        found = ids[at] == wanted
        known = dict(zip(wanted[found].tolist(), cosines[at[found]].tolist(), strict=True))
    else:
        known = {}
    known.update(cos)
    cosine_of = known.get

    if method is FusionMethod.VECTOR:
        return [(cid, evidence.cosine(c), None, c) for cid, c in vector]
    if method is FusionMethod.LEXICAL_FIRST:
        return lexical_first(keyword, vector, cosine_of, evidence, boost, want)
    union = list(dict.fromkeys([cid for cid, _ in keyword] + [cid for cid, _ in vector]))
    w = options.bm25_weight
    if method is FusionMethod.CALIBRATED:
        scored = [
            (cid, w * evidence.lexical(bm25.get(cid)) + (1 - w) * evidence.cosine(cosine_of(cid)))
            for cid in union
        ]
        scored.sort(key=lambda item: (-item[1], -bm25.get(item[0], float("-inf"))))
        return [(cid, s, bm25.get(cid), cosine_of(cid)) for cid, s in scored]
    if method is FusionMethod.RRF:
        rank_b = {cid: r for r, (cid, _) in enumerate(keyword, start=1)}
        rank_v = {cid: r for r, (cid, _) in enumerate(vector, start=1)}
        k = options.rrf_k
        scored = [
            (cid, (1 / (k + rank_b[cid]) if cid in rank_b else 0.0)
             + (1 / (k + rank_v[cid]) if cid in rank_v else 0.0))
            for cid in union
        ]  # fmt: skip
    else:
        norm_b = minmax(bm25)
        norm_v = minmax(cos)
        extra = boost or {}
        scored = [
            (cid, w * norm_b.get(cid, 0.0) + (1 - w) * norm_v.get(cid, 0.0) + extra.get(cid, 0.0))
            for cid in union
        ]
    scored.sort(key=lambda item: (-item[1], -bm25.get(item[0], float("-inf"))))
    ranked: Ranked = []
    for cid, _ in scored:
        b, c = bm25.get(cid), cosine_of(cid)
        ranked.append((cid, max(evidence.lexical(b), evidence.cosine(c)), b, c))
    return ranked


def boosted_scores(keyword: list[tuple[int, float]], boost: dict[int, float]) -> dict[int, float]:
    """Each keyword hit's min-max normalised BM25 plus its boost."""
    get = boost.get
    return {cid: s + get(cid, 0.0) for cid, s in minmax(dict(keyword)).items()}


def contenders(
    keyword: list[tuple[int, float]], boost: dict[int, float], want: int | None
) -> list[tuple[int, float]]:
    """The first hits of ``keyword`` (best BM25 first) that can still be among the first
    ``want`` once boosted (``boosted_scores``), the others left out: a hit whose normalised
    score plus the largest boost is below the ``want``-th best normalised score has ``want``
    hits above it whatever its boost. Ordering the contenders gives the first ``want`` of
    ordering them all, at the cost of the few that can reach them."""
    if want is None or len(keyword) <= want or (boost and min(boost.values()) < 0.0):
        return keyword
    low, high = keyword[-1][1], keyword[0][1]
    if high - low <= 1e-12:
        return keyword  # every normalised score is 1.0
    span = high - low
    cap = max(boost.values(), default=0.0)
    floor = (keyword[want - 1][1] - low) / span
    end = want
    while end < len(keyword) and (keyword[end][1] - low) / span + cap >= floor:
        end += 1
    return keyword[:end]


def boosted(
    keyword: list[tuple[int, float]], boost: dict[int, float], want: int | None = None
) -> list[tuple[int, float]]:
    """The keyword hits ordered by their boosted score (ties: BM25, then id), raw BM25 kept;
    with ``want``, the first ``want`` of that order and maybe a few more (``contenders``)."""
    order = boosted_scores(keyword, boost)
    keys = sorted((-order[cid], -s, cid) for cid, s in contenders(keyword, boost, want))
    return [(cid, -negated) for _, negated, cid in keys]


def lexical_first(
    keyword: list[tuple[int, float]],
    vector: list[tuple[int, float]],
    cosine_of: Callable[[int], float | None],
    evidence: Evidence,
    boost: dict[int, float] | None = None,
    want: int | None = None,
) -> Ranked:
    """Keyword hits by BM25 (or by boosted score), exact ties broken by cosine; then fill-ins.
    With ``want``, only as many as decide the first ``want`` (``contenders``)."""
    order = boosted_scores(keyword, boost) if boost else dict(keyword)
    kept = contenders(keyword, boost or {}, want)
    keys = []  # (order, cosine tie-break, position: the sort is stable), compared natively
    for i, (cid, s) in enumerate(kept):
        c = cosine_of(cid)
        keys.append((-order[cid], -(c if c is not None else -2.0), i, cid, s, c))
    keys.sort()
    reference = evidence.reference  # ``evidence.lexical`` inlined: a call per candidate
    ranked: Ranked = [
        (cid, (e if (e := s / reference) < 1.0 else 1.0) if s > 0 else 0.0, s, c)
        for _, _, _, cid, s, c in keys
    ]
    if len(kept) < len(keyword) or (want is not None and len(ranked) >= want):
        return ranked  # the fill-ins follow every keyword hit: none is among the first ``want``
    seen = {cid for cid, _ in keyword}
    # Fill-ins follow every keyword hit, at half their semantic evidence (none for hashing).
    ranked.extend((cid, 0.5 * evidence.cosine(c), None, c) for cid, c in vector if cid not in seen)
    return ranked


def minmax(scores: dict[int, float]) -> dict[int, float]:
    """Scores mapped onto [0, 1] by their min and max (all 1.0 when they tie)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {cid: (s - low) / (high - low) for cid, s in scores.items()}
