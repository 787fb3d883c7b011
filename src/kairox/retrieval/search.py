"""Hybrid search over one workspace: BM25 from the in-memory keyword index fused with exact
NumPy cosine top-k, the same on every store backend. From ``ann_min_rows`` vectors the vector
side walks an HNSW graph instead: hnswlib in this process (``retrieval.ann``), or the index a
store keeps itself (``IndexedVectors``: pgvector on Postgres, shared by every process).

The keyword side is ``kairox.retrieval.bm25``: one index per scope, built from the store's texts
on first use and caught up when the scope's generation moves, with the scope's own statistics
(Lucene's IDF). The user's query is never query syntax: it is split into words here, so quotes,
``*``, ``NEAR``, ``-``, ``:`` or parentheses are plain text. On large indexes, words found in
more than 5% of chunks do not gather keyword candidates (they cost most of its time): they only
rescore the candidates the rarer words gather, and when every word is that common, all of them
gather. Dropping them is a speed device that never decides whether anything is found. Fusion is
chosen so the hybrid is never worse than BM25 alone: a lexical embedder (``hashing``) only breaks
BM25 ties (its cosines are no evidence of their own, so it never fills in); a semantic one is
ranked by min-max fusion (SciFact 0.738, against 0.730 for a sum of calibrated scores). Either
way the score a hit reports is absolute. A large scope's keyword index is saved in the store
(``kairox.store.keyword_snapshots``), so a fresh process loads it instead of rebuilding it.

Every hit's ``score`` is absolute (``kairox.retrieval.relevance``): BM25 against the query's own
reference and cosine through the embedder's calibration, so a hit with no evidence on either side
is not returned at all and scores compare across queries and sources.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from kairox.retrieval import ann
from kairox.retrieval.ann_indexes import ApproximateIndexes
from kairox.retrieval.embeddings import is_lexical
from kairox.retrieval.embeddings.base import EmbeddingBackend, FloatMatrix
from kairox.retrieval.fusion import (
    Evidence,
    FusionMethod,
    Ranked,
    SearchOptions,
    boosted,
    contenders,
    fuse,
)
from kairox.retrieval.keyword_side import Keywords, KeywordSide, query_terms
from kairox.retrieval.lexical_bounds import LexicalBounds
from kairox.retrieval.relevance import (
    NO_EVIDENCE,
    STOPWORDS,
    LexicalEvidence,
    cosine_scale,
    reference_idf,
    weighed,
)
from kairox.retrieval.saved_matrix import SavedMatrices
from kairox.retrieval.store_index import StoreIndexes
from kairox.retrieval.types import RetrievalHit, snippet_of
from kairox.retrieval.vectors import Matrix, caught_up, row_dots, top, versions
from kairox.store.protocols import ChunkStore, IndexedVectors, RankStore, VectorDelta
from kairox.store.terms import bm25_idf, stemmer
from kairox.store.vectors import IdArray

log = logging.getLogger(__name__)

_NO_MATRIX = Matrix(-1, np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A ranked chunk. ``bm25``/``cosine`` are the raw component scores, when known."""

    chunk_id: int
    workspace_id: str
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    bm25: float | None
    cosine: float | None

    def snippet(self, width: int = 160) -> str:
        return snippet_of(self.text, width)

    def to_retrieval_hit(self, source: str) -> RetrievalHit:
        return RetrievalHit(
            source=source,
            chunk_id=f"{self.path}:{self.start_line}-{self.end_line}",
            text=self.text,
            score=self.score,
            path=self.path,
            start_line=self.start_line,
            end_line=self.end_line,
        )


class HybridRanker(KeywordSide):
    """Keyword + vector ranking over a ``RankStore``; keeps each scope's keyword index
    (``kairox.retrieval.bm25``) and vector matrix in memory, brought up to date from the store
    when its generation moves.

    The workspace index (``HybridSearcher``) and the history index rank with this same code.
    """

    boosting: ClassVar[bool] = False
    """Whether ``boosts`` may raise a candidate (the history index's do). Without boosts, BM25's
    first ``want`` are its keyword side's first ``want``: no more are gathered in order."""

    def __init__(
        self,
        store: RankStore,
        embedder: EmbeddingBackend,
        options: SearchOptions | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.options = options or SearchOptions()
        self._stemmer = stemmer()  # the process's: a turn's searches stem its words once
        self._matrices: dict[tuple[str, str], Matrix] = {}
        self._lock = threading.Lock()
        self._keywords: dict[str, Keywords] = {}
        self._keyword_lock = threading.Lock()
        self._keys: dict[str, Mapping[int, int]] = {}  # each scope's document versions (digests)
        self._unsaved: dict[str, int] = {}  # documents changed since the index was saved
        self._changed: dict[str, int] = {}  # documents the last ``sync_keywords`` changed
        self._pins = threading.local()  # scope -> generation, read once per search
        self._store_indexes = (
            StoreIndexes(
                store,
                lambda: self.embedder.model_id,
                lambda: self.options.ann_min_rows,
                self.generation,
                self._forget_matrix,
            )
            if isinstance(store, IndexedVectors)
            else None
        )
        self._saved_matrices = SavedMatrices(
            store, lambda: self.embedder.model_id, self._saves_matrix
        )
        self._indexes = ApproximateIndexes(
            store,
            lambda: self.embedder.model_id,
            self.options.ann_min_rows,
            self._matrix,
            self.generation,
            self._forget_matrix,
        )

    def method(self, fusion: FusionMethod | None) -> FusionMethod:
        method = fusion or self.options.fusion
        if method is FusionMethod.AUTO:
            lexical = is_lexical(self.embedder)
            method = FusionMethod.LEXICAL_FIRST if lexical else FusionMethod.MINMAX
        return method

    def rank(
        self, scope: str, query: str, *, k: int = 10, fusion: FusionMethod | None = None
    ) -> Ranked:
        """The top ``k`` ids of ``scope`` as (id, ranking score, bm25, cosine), best first."""
        if k <= 0 or not query.strip():
            return []
        with self.pinned():
            terms = self.keyword_terms(scope, query)
            depth = max(self.options.candidates, k)
            scale = self.evidence(scope, terms)
            method = self.method(fusion)
            return self.ranked(scope, query, terms, scale, depth, method, want=k)[:k]

    @contextmanager
    def pinned(self, known: Mapping[str, int] | None = None) -> Iterator[None]:
        """Within this block (on this thread) each scope's generation is read from the store
        once: one search is one consistent view, and a round trip, not one per step. ``known``
        are generations the caller has just read (so they are not read again)."""
        pins: dict[str, int] | None = getattr(self._pins, "scopes", None)
        if pins is not None:
            yield
            return
        self._pins.scopes = dict(known or {})
        try:
            yield
        finally:
            self._pins.scopes = None

    def generation(self, scope: str) -> int:
        """The store's generation of ``scope`` (read once inside ``pinned``)."""
        pins: dict[str, int] | None = getattr(self._pins, "scopes", None)
        if pins is None:
            return self.store.generation(scope)
        found = pins.get(scope)
        if found is None:
            found = pins[scope] = self.store.generation(scope)
        return found

    def ranked(
        self,
        scope: str,
        query: str,
        terms: list[str],
        scale: Evidence,
        depth: int,
        method: FusionMethod,
        *,
        want: int | None = None,
        fill_ins: bool = True,
    ) -> Ranked:
        """Every fused candidate of ``scope`` (up to ``depth`` per side), best first; with
        ``want``, the first ``want`` of that list and maybe some after them. Without
        ``fill_ins``, lexical-first on cosines of no evidence leaves out its fill-ins (which
        follow every keyword hit) and scans only the keyword hits' rows."""
        if method is FusionMethod.BM25:
            limit = depth if want is None or self.boosting else min(depth, want)
            keyword = self._keyword(scope, terms, limit)
            boost = self.boosts(scope, terms, [cid for cid, _ in keyword])
            if boost:
                keyword = boosted(keyword, boost, want)
            reference = scale.reference  # ``scale.lexical`` inlined: a call per candidate
            return [
                (cid, (e if (e := s / reference) < 1.0 else 1.0) if s > 0 else 0.0, s, None)
                for cid, s in keyword[:want]
            ]
        served = self.served_dims(scope)
        if served is not None:  # the store's own index: no matrix in this process
            return self._store_ranked(scope, query, terms, scale, depth, method, served)
        matrix, index = self.vector_side(scope)
        # One thread: overlapping the two sides on a thread pool cost more than it saved (the
        # keyword side is a fraction of a millisecond, and the hand-off and a BLAS thread
        # contending with it on a busy machine are not).
        if index is None and method is FusionMethod.LEXICAL_FIRST and scale.semantic is NO_EVIDENCE:
            # Cosines of no evidence (``hashing``) only break the keyword hits' ties, and
            # lexical-first's fill-ins follow every keyword hit with none of their own; when the
            # keyword side returned every document holding a query word, no fill-in has lexical
            # evidence either, so none is ever a hit: only the keyword hits' rows are scanned.
            keyword, whole = self._keyword_gathered(scope, terms, depth)
            if whole or not fill_ins:
                boost = self._fusion_boosts(scope, terms, method, keyword, [])
                # Only the hits that can be among the first ``want`` are ordered, by their
                # cosines: the others' are never read.
                kept = contenders(keyword, boost or {}, want)
                ids, cosines = _cosines_of(self.embedder, query, matrix, kept)
                return fuse(method, keyword, [], ids, cosines, self.options, scale, boost, want)
            cosines = self._cosines(query, matrix.vectors)
            ids, vector = matrix.ids, top(matrix.ids, cosines, depth)
        elif index is None:
            ids = matrix.ids
            cosines = self._cosines(query, matrix.vectors)
            keyword = [] if method is FusionMethod.VECTOR else self._keyword(scope, terms, depth)
            vector = top(ids, cosines, depth)
        else:  # an approximate index: the keyword candidates' cosines are read from its rows
            asked = self.embedder.embed([query])[0]
            keyword = [] if method is FusionMethod.VECTOR else self._keyword(scope, terms, depth)
            if asked.shape[0] != index.dimensions:
                vector, ids, cosines = [], _NO_MATRIX.ids, np.zeros(0, dtype=np.float32)
            else:
                vector = ann.nearest(index, asked, depth)
                ids, cosines = self._indexes.cosines_of(index, [c for c, _ in keyword], asked)
        boost = self._fusion_boosts(scope, terms, method, keyword, vector)
        return fuse(method, keyword, vector, ids, cosines, self.options, scale, boost, want)

    def _fusion_boosts(
        self,
        scope: str,
        terms: list[str],
        method: FusionMethod,
        keyword: list[tuple[int, float]],
        vector: list[tuple[int, float]],
    ) -> dict[int, float] | None:
        """The boosts a fusion adds: min-max boosts every candidate, lexical-first only its
        keyword hits (its fill-ins are never boosted), the others none."""
        if method is FusionMethod.LEXICAL_FIRST:
            return self.boosts(scope, terms, [c for c, _ in keyword])
        if method is FusionMethod.MINMAX:
            candidates = list(dict.fromkeys([c for c, _ in keyword] + [c for c, _ in vector]))
            return self.boosts(scope, terms, candidates)
        return None

    def _store_ranked(
        self,
        scope: str,
        query: str,
        terms: list[str],
        scale: Evidence,
        depth: int,
        method: FusionMethod,
        dims: int,
    ) -> Ranked:
        """``ranked`` with the vector side asked of the store's own index
        (``retrieval.store_index``)."""
        assert self._store_indexes is not None
        asked = self.embedder.embed([query])[0]
        keyword, vector, ids, cosines = self._store_indexes.sides(
            scope,
            asked,
            dims,
            depth,
            lambda: [] if method is FusionMethod.VECTOR else self._keyword(scope, terms, depth),
        )
        boost = self._fusion_boosts(scope, terms, method, keyword, vector)
        return fuse(method, keyword, vector, ids, cosines, self.options, scale, boost)

    def boosts(self, scope: str, terms: list[str], ids: list[int]) -> dict[int, float] | None:
        """Extra ranking score for candidates (added to their min-max normalised score by the
        lexical-first, min-max and BM25 rankings); None for none. The history index boosts a
        turn by how well its whole session matches."""
        return None

    def lexical_evidence(self, scope: str, query: str) -> LexicalEvidence:
        """The query's content words weighted by their IDF in ``scope``."""
        total, df = self._statistics(scope)
        return LexicalEvidence.build(
            query_terms(query),
            self._stemmer.stems,
            df,
            total,
            porter=True,  # QueryStemmer is FTS5's porter tokenizer
        )

    def evidence(self, scope: str, terms: Sequence[str]) -> Evidence:
        """How raw BM25 and cosine scores of these query words become absolute evidence."""
        return self.query_evidence(scope, "", terms, lexical=False)[0]

    def query_evidence(
        self, scope: str, query: str, terms: Sequence[str], *, lexical: bool = True
    ) -> tuple[Evidence, LexicalEvidence | None]:
        """``evidence(scope, terms)`` and, with ``lexical``, ``lexical_evidence(scope,
        query)``, for ``terms`` the query's ``keyword_terms``: those are its content words
        unless it has none, so one lookup of their stems' document frequencies serves both."""
        semantic = cosine_scale(self.embedder.model_id)
        total, frequencies = self._statistics(scope)
        stems = self._stemmer.stems(terms) if terms else []
        df = frequencies(stems) if stems else {}
        found: LexicalEvidence | None = None
        if lexical and any(t not in STOPWORDS for t in terms):  # the content words: ``terms``
            found = LexicalEvidence.of_stems(stems, self._stemmer.stems, df, total, porter=True)
            weights = found.weights  # each weighed stem's IDF
            idfs = tuple(weights[stem] for stem in stems if stem in weights)
        else:
            idfs = tuple(
                bm25_idf(total, df.get(stem, 0)) for stem in stems if weighed(stem, df.get(stem, 0))
            )
        scale = Evidence(idfs if total > 0 else (), reference_idf(total), semantic)
        if lexical and found is None:
            found = self.lexical_evidence(scope, query)
        return scale, found

    def matrix(self, workspace_id: str) -> tuple[IdArray, FloatMatrix]:
        """The scope's vectors for this model as (ascending ids, float32 rows), kept in memory
        and caught up when the store's generation moves (another process's writes included):
        a ``VectorDelta`` store is asked only for the vectors that changed."""
        cached = self._matrix(workspace_id)
        return cached.ids, cached.vectors

    def _matrix(self, workspace_id: str) -> Matrix:
        key = (workspace_id, self.embedder.model_id)
        generation = self.generation(workspace_id)
        with self._lock:
            cached = self._matrices.get(key)
            if cached is None or cached.generation != generation:
                cached = self._load_matrix(workspace_id, generation, cached)
                self._matrices[key] = cached
        return cached

    def served_dims(self, scope: str) -> int | None:
        """The vector size of the store's own approximate index of the scope when searches use
        it (``IndexedVectors``: pgvector HNSW on Postgres; ``retrieval.store_index``)."""
        return self._store_indexes.dims(scope) if self._store_indexes is not None else None

    def build_served_index(self, scope: str) -> int | None:
        """Have the store build the scope's index now (blocking, from ``ann_min_rows`` rows):
        its vector size, or None when none was built (or the store keeps none)."""
        return self._store_indexes.build(scope) if self._store_indexes is not None else None

    def _forget_matrix(self, scope: str) -> None:
        with self._lock:
            self._matrices.pop((scope, self.embedder.model_id), None)

    def _in_process_index(self) -> bool:
        """Whether the approximate index lives in this process (``retrieval.ann``): not for a
        store that keeps its own (``served_dims``)."""
        return self._store_indexes is None and ann.available()

    def vector_side(self, scope: str) -> tuple[Matrix, ann.VectorIndex | None]:
        """The scope's matrix, or its approximate index when one is ready (then the matrix is
        not read: an empty one stands in). When an index is used, built, loaded from the store's
        saved indexes and saved: ``kairox.retrieval.ann_indexes``. A store that keeps its own
        index (``served_dims``) gets none in this process."""
        index = self._indexes.ready(scope) if self._in_process_index() else None
        if index is not None:
            return _NO_MATRIX, index
        return self._matrix(scope), None

    def build_vector_index(self, scope: str) -> ann.VectorIndex | None:
        """Build the scope's approximate index now, load the saved one, or catch it up with the
        store (blocking); None below ``ann_min_rows`` rows, without hnswlib, or for a store
        that keeps its own index."""
        return self._indexes.build(scope) if self._in_process_index() else None

    def _saves_matrix(self, rows: int) -> bool:
        """Whether a matrix of ``rows`` read from the store is saved (``retrieval.saved_matrix``):
        not below ``saved_matrix_min_rows``, nor where the approximate index holds the rows."""
        options = self.options
        walked = self._in_process_index() and rows >= options.ann_min_rows
        return rows >= options.saved_matrix_min_rows and not walked

    def _load_matrix(self, scope: str, generation: int, cached: Matrix | None) -> Matrix:
        store, model = self.store, self.embedder.model_id
        if not isinstance(store, VectorDelta):
            return Matrix(generation, *store.load_vectors(scope, model))
        if cached is None:  # a fresh process: the saved matrix, when there is one
            cached = self._saved_matrices.load(scope, generation)
            if cached is not None and cached.generation == generation:
                return cached
        # The versions are read before the vectors: a vector written in between is read again
        # next time (its version will not match), never kept under a stale version.
        keys = dict(store.vector_keys(scope, model))
        matrix, changed = None, -1
        if cached is not None and cached.keys is not None and len(cached.ids):
            caught = caught_up(store, scope, model, cached, keys)
            if caught is not None:
                ids, vectors, changed = caught
                matrix = Matrix(generation, ids, vectors, versions(ids, keys))
        if matrix is None:
            ids, vectors = store.load_vectors(scope, model)
            matrix = Matrix(generation, ids, vectors, versions(ids, keys))
        self._saved_matrices.kept(scope, matrix, changed)
        return matrix

    def invalidate(self) -> None:
        with self._lock:
            self._matrices.clear()
        self._indexes.clear()
        if self._store_indexes is not None:
            self._store_indexes.clear()

    def close(self) -> None:
        """Stop the threads waiting for a store's nearest vectors, if any were started."""
        if self._store_indexes is not None:
            self._store_indexes.close()

    def _cosines(self, query: str, matrix: FloatMatrix) -> FloatMatrix:
        if matrix.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        vector = self.embedder.embed([query])[0]
        if vector.shape[0] != matrix.shape[1]:
            return np.zeros(0, dtype=np.float32)
        return row_dots(matrix, vector)


class HybridSearcher(HybridRanker):
    """Hybrid search over one workspace's chunks in a ``ChunkStore``; every hit's score is
    absolute (see the module docstring)."""

    def __init__(
        self,
        store: ChunkStore,
        embedder: EmbeddingBackend,
        options: SearchOptions | None = None,
    ) -> None:
        super().__init__(store, embedder, options)
        self.chunks = store

    def warm_vectors(self, workspace_id: str, *, changed: bool = True) -> None:
        """Build, load or catch up the workspace's approximate vector index now (saving it),
        when it has enough chunks for one: a one-shot search after ``kairox index`` then loads
        it instead of scanning every vector. Unless ``changed``, only a missing index is
        built (one saved stays on disk until a search wants it). A store that keeps its own
        index (pgvector on Postgres) builds it now if it has none."""
        rows = self.chunks.chunk_count(workspace_id)
        if rows < self.options.ann_min_rows:
            if self._saves_matrix(rows):  # a fresh process maps the saved matrix instead
                self._saved_matrices.warm(workspace_id, self._matrix(workspace_id))
            return
        if self._in_process_index():
            self._indexes.warm(workspace_id, changed=changed)
        elif self._store_indexes is not None and self.served_dims(workspace_id) is None:
            self.build_served_index(workspace_id)

    def search(
        self, workspace_id: str, query: str, *, k: int = 10, fusion: FusionMethod | None = None
    ) -> list[SearchHit]:
        method = self.method(fusion)
        if k <= 0 or not query.strip():
            return []
        depth = max(self.options.candidates, k)
        with self.pinned():
            terms = self.keyword_terms(workspace_id, query)
            scale, lexical = self.query_evidence(
                workspace_id, query, terms, lexical=method is not FusionMethod.VECTOR
            )
            # Lexical-first on cosines of no evidence: the fill-ins (and the scan that finds
            # them) are wanted only when fewer than k keyword hits have evidence. The keyword
            # hits rank the same either way, so the first k found among them are the hits.
            # Its first k (``want``) rank the same as in the whole list, likewise, and so do
            # BM25's, which has no fill-ins: only a list cut at ``want`` may hold more hits.
            lazy = method is FusionMethod.LEXICAL_FIRST and scale.semantic is NO_EVIDENCE
            want, fill_ins = (k, False) if lazy or method is FusionMethod.BM25 else (None, True)
            ranked = self.ranked(
                workspace_id, query, terms, scale, depth, method, want=want, fill_ins=fill_ins
            )
            hits = self._select(workspace_id, ranked, k, method, scale, lexical)
            if len(hits) < k and want is not None and (lazy or len(ranked) >= want):
                ranked = self.ranked(workspace_id, query, terms, scale, depth, method)
                hits = self._select(workspace_id, ranked, k, method, scale, lexical)
            return hits

    def _select(
        self,
        workspace_id: str,
        ranked: Ranked,
        k: int,
        method: FusionMethod,
        scale: Evidence,
        lexical: LexicalEvidence | None,
    ) -> list[SearchHit]:
        """The first ``k`` hits in ``ranked`` order that have evidence, each scored absolutely:
        the lexical evidence of its text, the semantic evidence of its cosine, or the better of
        the two; never above a hit ranked before it.

        Only the rows of hits are read: which query words each candidate's document holds
        (path and text) comes from the keyword index's postings, so a candidate with no
        evidence on either side is passed over unread, and the others are read as many as are
        still wanted at a time (one statement, almost always). A text is scanned for its words
        only where the postings cannot say which of them it holds (``LexicalBounds``)."""
        bounds = LexicalBounds(
            self._stemmer,
            lexical,
            [r[0] for r in ranked],
            lambda ids, stems: self.held_stems(workspace_id, ids, stems),
        )
        semantic = method is not FusionMethod.BM25
        out: list[SearchHit] = []
        ceiling = 1.0
        at = 0
        while len(out) < k and at < len(ranked):
            batch: list[tuple[int, float]] = []  # (position in ranked, semantic evidence)
            while len(batch) < k - len(out) and at < len(ranked):
                cosine = scale.cosine(ranked[at][3]) if semantic else 0.0
                if cosine > 0.0 or bounds.bound(at) > 0.0:
                    batch.append((at, cosine))
                at += 1
            found = self.chunks.get_chunks(workspace_id, [ranked[i][0] for i, _ in batch])
            chunks = {c.id: c for c in found}
            for i, cosine in batch:
                cid, _, bm, cos = ranked[i]
                c = chunks.get(cid)
                if c is None:
                    continue
                score = max(bounds.of(i, c.path, c.text), cosine)
                if score <= 0.0:
                    continue
                ceiling = min(score, ceiling)
                out.append(
                    SearchHit(
                        cid,
                        workspace_id,
                        c.path,
                        c.start_line,
                        c.end_line,
                        c.text,
                        ceiling,
                        bm,
                        cos,
                    )
                )
        return out


def _cosines_of(
    embedder: EmbeddingBackend, query: str, matrix: Matrix, keyword: list[tuple[int, float]]
) -> tuple[IdArray, FloatMatrix]:
    """The query's cosines with the keyword hits' rows of ``matrix``, as (ascending ids,
    cosines): every cosine lexical-first reads when it has no fill-ins."""
    wanted = np.unique(np.asarray([cid for cid, _ in keyword], dtype=np.int64))
    if not len(wanted) or not len(matrix.ids):
        return _NO_MATRIX.ids, np.zeros(0, dtype=np.float32)
    at = np.minimum(np.searchsorted(matrix.ids, wanted), len(matrix.ids) - 1)
    found = matrix.ids[at] == wanted
    vector = embedder.embed([query])[0]
    if vector.shape[0] != matrix.vectors.shape[1]:
        return _NO_MATRIX.ids, np.zeros(0, dtype=np.float32)
    return wanted[found], row_dots(np.asarray(matrix.vectors[at[found]]), vector)
