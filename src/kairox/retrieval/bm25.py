"""BM25 over an in-memory inverted index, one per search scope, updated in place.

FTS5's ``bm25()`` ranks every row matching any ORed query word and takes its statistics from the
whole table (every workspace of the home); ranking here runs over NumPy postings with the
scope's own statistics (document count, average length and document frequencies of the
workspace, or of the sessions a recall covers), so another workspace's traffic never changes a
score, and a query costs a gather per query word instead of a scan of the matches.

The score is FTS5's multi-column BM25 with Lucene's IDF: a term's frequency in a document is the
weighted sum of its counts in the fields, the length is every field's tokens, and
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` (never zero). Words are FTS5's ``porter
unicode61`` tokens: the text is split into words here and each distinct word is stemmed once by
FTS5's own tokenizer, so stems are exactly the ones the FTS5 index held.

Updates are log-structured, as in Lucene: an ``add`` writes a new segment (postings sorted by
term), equal-sized neighbours merge, and a ``remove`` marks documents dead until a compaction
renumbers them. Adding or removing documents therefore gives the same scores as a rebuild.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from kairox.store.terms import QueryStemmer, bm25_idf
from kairox.store.words import words

K1 = 1.2
B = 0.75
_SCORED_MAX = 4_000_000  # postings whose score parts are kept between updates (~48 MB)
_COMPACT_MIN = 1024  # dead documents before a compaction is considered (and a quarter)

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
_IntArray = npt.NDArray[np.int32] | npt.NDArray[np.int64]
_FloatArray = npt.NDArray[np.float32] | npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class _Segment:
    """Postings of the documents in slots [lo, hi): for term t, ``slots[indptr[t]:indptr[t+1]]``
    with their weighted frequencies ``tfs``."""

    lo: int
    hi: int
    indptr: Ints
    slots: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.float32]

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        if term + 1 >= len(self.indptr):
            return self.slots[:0], self.tfs[:0]
        a, b = int(self.indptr[term]), int(self.indptr[term + 1])
        return self.slots[a:b], self.tfs[a:b]

    def terms(self) -> npt.NDArray[np.int32]:
        return np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int32), np.diff(self.indptr))


def _segment(
    lo: int, hi: int, terms: _IntArray, slots: _IntArray, tfs: _FloatArray, vocabulary: int
) -> _Segment:
    """A segment of postings that are in slot order within each term (a stable sort by term
    then orders them by (term, slot))."""
    order = np.argsort(terms, kind="stable")
    return _sorted_segment(lo, hi, terms[order], slots[order], tfs[order], vocabulary)


def _sorted_segment(
    lo: int, hi: int, terms: _IntArray, slots: _IntArray, tfs: _FloatArray, vocabulary: int
) -> _Segment:
    counts = np.bincount(terms, minlength=vocabulary)
    indptr = np.zeros(vocabulary + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    slots32 = slots.astype(np.int32, copy=False)
    return _Segment(lo, hi, indptr, slots32, tfs.astype(np.float32, copy=False))


@dataclass(frozen=True, slots=True)
class KeywordState:
    """Everything a ``KeywordIndex`` holds, as arrays and word lists, with its postings in one
    segment: what a saved index is made of (``kairox.retrieval.keyword_snapshot``)."""

    weights: tuple[float, ...]
    counted: tuple[bool, ...] | None
    k1: float
    b: float
    words: list[str]  # surface words, with ``codes`` (a term id, or -1 - i for ``multi[i]``)
    codes: Ints
    multi: list[tuple[int, ...]]
    terms: list[str]  # stems, by term id
    ids: Ints
    lengths: Floats
    indptr: Ints
    slots: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.float32]
    max_id: int
    total_length: float


class KeywordIndex:
    """BM25 over the documents of one scope. A document is an id and one text per field;
    ``weights`` weigh the fields' term counts (FTS5's ``bm25()`` column weights); ``counted``
    says which fields count towards a term's document frequency (all by default: the history
    index leaves out its context field, which repeats the turn before, so that a word said once
    does not look common).

    Not thread-safe for writes: the owner serialises ``add``/``remove`` against searches.
    """

    def __init__(
        self,
        weights: Sequence[float] = (1.0,),
        *,
        counted: Sequence[bool] | None = None,
        stemmer: QueryStemmer | None = None,
        k1: float = K1,
        b: float = B,
        compact_min: int = _COMPACT_MIN,
    ) -> None:
        self.weights = tuple(float(w) for w in weights)
        self.counted = tuple(bool(c) for c in counted) if counted is not None else None
        self.k1, self.b = k1, b
        self._compact_min = compact_min
        self._stemmer = stemmer or QueryStemmer()
        # surface word -> its term id, or -1 - i for ``_multi[i]`` (not one FTS5 token)
        self._words: dict[str, int] = {}
        self._saved_words: tuple[list[str], Ints] | None = None  # ``_words`` not yet built
        self._multi: list[tuple[int, ...]] = []
        self._terms: dict[str, int] = {}  # stem -> term id
        self._segments: list[_Segment] = []
        self._ids: Ints = np.zeros(0, dtype=np.int64)  # slot -> document id
        self._lengths: Floats = np.zeros(0, dtype=np.float64)
        self._alive = np.zeros(0, dtype=bool)
        self._slot_of: dict[int, int] | None = {}  # id -> slot; None: made from _ids on need
        self._dead = 0
        self._max_id = 0
        self._total_length = 0.0
        self._norms: Floats | None = None
        # Each term's postings with their length-normalised tf part of the score and its
        # document frequency, computed on first use and kept until the next update (common
        # words recur across queries). A posting from uncounted fields only has a negative tf.
        self._scored: dict[int, tuple[npt.NDArray[np.int32], Floats, int]] = {}
        self._scored_size = 0
        self._by_id: tuple[Ints, Ints] | None = None  # live (ids ascending, their slots)

    # -- statistics -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids) - self._dead

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slots_by_id()

    @property
    def max_id(self) -> int:
        """The highest id ever added (0 for none)."""
        return self._max_id

    def ids(self) -> set[int]:
        return set(self._slots_by_id())

    def stems(self, words: Sequence[str]) -> list[str]:
        """The query words as index terms (FTS5 porter stems), in order."""
        return self._stemmer.stems(words)

    def document_frequencies(self, stems: Sequence[str]) -> dict[str, int]:
        """How many live documents hold each stem."""
        return {stem: self._df(self._terms.get(stem)) for stem in stems}

    def idf(self, stem: str) -> float:
        return bm25_idf(len(self), self._df(self._terms.get(stem)))

    def _df(self, term: int | None) -> int:
        if term is None:
            return 0
        known = self._scored.get(term)  # a term searched since the last update
        if known is not None:
            return known[2]
        return sum(int(np.count_nonzero(tfs > 0)) for _, tfs in self._postings(term))

    # -- updates ------------------------------------------------------------------------------

    def add(self, docs: Sequence[tuple[int, Sequence[str]]]) -> None:
        """Index documents (id, field texts); a document already there is replaced."""
        if not docs:
            return
        slot_of = self._slots_by_id()
        self.remove([doc_id for doc_id, _ in docs if doc_id in slot_of])
        docs = list({doc_id: fields for doc_id, fields in docs}.items())
        nfields = len(self.weights)
        groups = [
            words(fields[f]) if f < len(fields) else []
            for _, fields in docs
            for f in range(nfields)
        ]
        terms, sizes = self._term_ids(groups)
        lo = len(self._ids)
        hi = lo + len(docs)
        group = np.repeat(np.arange(len(groups), dtype=np.int64), sizes)
        lengths = np.bincount(group // nfields, minlength=len(docs)).astype(np.float64)
        # One posting per (term, slot): sort the tokens by (term, slot, field), sum each run.
        keys = np.sort((terms << 40) | ((lo + group // nfields) << 8) | (group % nfields))
        field = keys & 0xFF
        pairs = keys >> 8
        starts = np.flatnonzero(np.diff(pairs, prepend=-1))
        weights = np.asarray(self.weights, dtype=np.float64)[field]
        tfs = np.add.reduceat(weights, starts) if len(starts) else weights
        terms, slots = pairs[starts] >> 32, pairs[starts] & 0xFFFFFFFF
        keep = tfs > 0
        if self.counted is not None and not all(self.counted):
            counted = np.asarray(self.counted + (True,) * nfields, dtype=np.int8)[field]
            own = np.maximum.reduceat(counted, starts) if len(starts) else counted
            tfs = np.where(own > 0, tfs, -tfs)
        terms, slots, tfs = terms[keep], slots[keep], tfs[keep]
        ids = np.fromiter((doc_id for doc_id, _ in docs), dtype=np.int64, count=len(docs))
        self._ids = np.concatenate([self._ids, ids])
        self._lengths = np.concatenate([self._lengths, lengths])
        self._alive = np.concatenate([self._alive, np.ones(len(docs), dtype=bool)])
        self._slots_by_id().update(zip(ids.tolist(), range(lo, hi), strict=True))
        self._max_id = max(self._max_id, int(ids.max()))
        self._total_length += float(lengths.sum())
        self._segments.append(_sorted_segment(lo, hi, terms, slots, tfs, len(self._terms)))
        while len(self._segments) >= 2 and self._size(-1) >= self._size(-2):
            last = self._segments.pop()
            self._segments[-1] = self._merge([self._segments[-1], last])
        self._stale()

    def _slots_by_id(self) -> dict[int, int]:
        """Each live document's slot, made from ``_ids`` on first need after a load."""
        if self._slot_of is None:
            self._slot_of = dict(zip(self._ids.tolist(), range(len(self._ids)), strict=True))
        return self._slot_of

    def _known_words(self) -> dict[str, int]:
        """``_words``, built from a saved index's lists on first need (an update, not a
        search: a fresh process that only searches never pays for it)."""
        if self._saved_words is not None:
            words, codes = self._saved_words
            self._words = dict(zip(words, codes.tolist(), strict=True))
            self._saved_words = None
        return self._words

    def _term_ids(self, groups: list[list[str]]) -> tuple[Ints, Ints]:
        """The term ids of every group's words, flattened, and each group's count of them."""
        flat = list(chain.from_iterable(groups))
        self._learn(set(flat))
        known = self._words
        codes = np.fromiter(map(known.__getitem__, flat), dtype=np.int64, count=len(flat))
        sizes = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
        if not len(codes) or codes.min() >= 0:
            return codes, sizes
        # Some word is not one FTS5 token (none or several): expand those words.
        multi = self._multi
        expanded = [
            [t for w in g for t in ((known[w],) if known[w] >= 0 else multi[-1 - known[w]])]
            for g in groups
        ]
        sizes = np.fromiter(map(len, expanded), dtype=np.int64, count=len(expanded))
        flat_ids = chain.from_iterable(expanded)
        return np.fromiter(flat_ids, dtype=np.int64, count=int(sizes.sum())), sizes

    def remove(self, doc_ids: Iterable[int]) -> None:
        """Drop documents (unknown ids are ignored)."""
        slot_of = self._slots_by_id()
        for doc_id in doc_ids:
            slot = slot_of.pop(doc_id, None)
            if slot is None:
                continue
            self._alive[slot] = False
            self._total_length -= float(self._lengths[slot])
            self._dead += 1
        self._stale()
        if self._dead >= self._compact_min and self._dead * 4 >= len(self._ids):
            self._compact()

    def _learn(self, new_words: set[str]) -> None:
        known = self._known_words()
        new = [w for w in new_words if w not in known]
        if not new:
            return
        for word, tokens in self._stemmer.tokens(new).items():
            ids = []
            for token in tokens:
                term = self._terms.get(token)
                if term is None:
                    term = self._terms[token] = len(self._terms)
                ids.append(term)
            if len(ids) == 1:
                self._words[word] = ids[0]
            else:
                self._words[word] = -1 - len(self._multi)
                self._multi.append(tuple(ids))

    def _size(self, at: int) -> int:
        seg = self._segments[at]
        return seg.hi - seg.lo

    def _merge(self, segments: list[_Segment]) -> _Segment:
        # int32 and float32 as stored (not widened): a build's peak memory is its merges
        terms = np.concatenate([s.terms() for s in segments])
        slots = np.concatenate([s.slots for s in segments])
        tfs = np.concatenate([s.tfs for s in segments])
        # each segment is in (term, slot) order and the segments are in slot order
        if self._dead:
            keep = self._alive[slots]
            terms, slots, tfs = terms[keep], slots[keep], tfs[keep]
        lo, hi = segments[0].lo, segments[-1].hi
        return _segment(lo, hi, terms, slots, tfs, len(self._terms))

    def _compact(self) -> None:
        """Renumber the live documents into one segment."""
        merged = self._merge(self._segments)
        renumber = np.cumsum(self._alive) - 1
        alive = self._alive
        self._ids = self._ids[alive]
        self._lengths = self._lengths[alive]
        self._alive = np.ones(len(self._ids), dtype=bool)
        self._slot_of = dict(zip(self._ids.tolist(), range(len(self._ids)), strict=True))
        self._dead = 0
        slots = renumber[merged.slots].astype(np.int32)
        self._segments = [_Segment(0, len(self._ids), merged.indptr, slots, merged.tfs)]
        self._stale()

    # -- saving -------------------------------------------------------------------------------

    def state(self) -> KeywordState:
        """The index as plain arrays (its segments merged and dead documents dropped first)."""
        if len(self._segments) > 1 or self._dead:
            self._compact()
        if self._segments:
            seg = self._segments[0]
            indptr, slots, tfs = seg.indptr, seg.slots, seg.tfs
        else:
            indptr = np.zeros(1, dtype=np.int64)
            slots, tfs = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        return KeywordState(
            weights=self.weights,
            counted=self.counted,
            k1=self.k1,
            b=self.b,
            words=list(self._known_words()),
            codes=np.fromiter(self._words.values(), dtype=np.int64, count=len(self._words)),
            multi=list(self._multi),
            terms=list(self._terms),
            ids=self._ids,
            lengths=self._lengths,
            indptr=indptr,
            slots=slots,
            tfs=tfs,
            max_id=self._max_id,
            total_length=self._total_length,
        )

    @classmethod
    def from_state(
        cls, state: KeywordState, *, stemmer: QueryStemmer | None = None
    ) -> KeywordIndex:
        """The index ``state`` describes, searchable and updatable as the one it came from."""
        index = cls(state.weights, counted=state.counted, stemmer=stemmer, k1=state.k1, b=state.b)
        if len(state.words) != len(state.codes):
            raise ValueError(f"{len(state.words)} words but {len(state.codes)} codes")
        index._saved_words = (state.words, state.codes)
        index._multi = list(state.multi)
        index._terms = dict(zip(state.terms, range(len(state.terms)), strict=True))
        count = len(state.ids)
        index._ids = state.ids
        index._lengths = state.lengths
        index._alive = np.ones(count, dtype=bool)
        index._slot_of = None  # made on the first update: a search does not need it
        index._max_id = state.max_id
        index._total_length = state.total_length
        if count:
            index._segments = [_Segment(0, count, state.indptr, state.slots, state.tfs)]
        return index

    # -- search -------------------------------------------------------------------------------

    def _postings(self, term: int) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]]:
        out = []
        for seg in self._segments:
            slots, tfs = seg.postings(term)
            if len(slots) and self._dead:
                keep = self._alive[slots]
                slots, tfs = slots[keep], tfs[keep]
            if len(slots):
                out.append((slots, tfs))
        return out

    def _stale(self) -> None:
        self._norms = None
        self._scored = {}
        self._scored_size = 0
        self._by_id = None

    def _live_slots(self, doc_ids: Sequence[int]) -> Ints:
        """Each document's live slot (-1 for one not in the index), by binary search over the
        live ids sorted once per update: a loaded index has no id -> slot dict until it is
        updated, and making one costs a fresh process tens of milliseconds per 100k documents."""
        if self._by_id is None:
            live = np.flatnonzero(self._alive)
            order = live[np.argsort(self._ids[live], kind="stable")]
            self._by_id = (self._ids[order], order)
        ids, slots = self._by_id
        wanted = np.asarray(doc_ids, dtype=np.int64)
        if not len(ids):
            return np.full(len(wanted), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        return np.where(ids[at] == wanted, slots[at], -1)

    def holding(self, doc_ids: Sequence[int], stems: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Whether each document (row) holds each of ``stems`` (column) in any field, from the
        postings (a document not in the index holds none): what a hit's lexical evidence is
        made of, without its text."""
        slots = self._live_slots(doc_ids).astype(np.int32)  # as postings are: no copy of them
        held = np.zeros((len(slots), len(stems)), dtype=bool)
        for column, stem in enumerate(stems):
            term = self._terms.get(stem)
            if term is None or not len(slots):
                continue
            known = self._scored.get(term)
            # Each segment's slots ascend, never -1 (an unknown document). A term not scored
            # since the last update is looked up segment by segment: scoring it only to learn
            # which documents hold it cost a millisecond per common word at 1M chunks.
            parts = [known[0]] if known is not None else [p for p, _ in self._postings(term)]
            for term_slots in parts:
                at = np.searchsorted(term_slots, slots)
                held[:, column] |= term_slots.take(at, mode="clip") == slots
        return held

    def _term_scores(self, term: int) -> tuple[npt.NDArray[np.int32], Floats, int] | None:
        """The term's live postings, each one's part of the score (``tf * (k1 + 1) / (tf +
        norm)`` times the term's IDF: both hold until the next update) and its document
        frequency."""
        known = self._scored.get(term)
        if known is not None:
            return known
        postings = self._postings(term)
        if not postings:
            return None
        slots = np.concatenate([p for p, _ in postings])
        signed = np.concatenate([t for _, t in postings]).astype(np.float64)
        tf = np.abs(signed)
        df = int(np.count_nonzero(signed > 0))
        parts = tf * (self.k1 + 1.0) / (tf + self._length_norms()[slots])
        known = (slots, bm25_idf(len(self), max(df, 1)) * parts, df)
        if self._scored_size + len(slots) <= _SCORED_MAX:
            self._scored[term] = known
            self._scored_size += len(slots)
        return known

    def _length_norms(self) -> Floats:
        """``k1 * (1 - b + b * length / average length)`` of every slot."""
        if self._norms is None:
            average = self._total_length / len(self) if len(self) else 1.0
            average = average if average > 0 else 1.0
            self._norms = self.k1 * (1.0 - self.b + self.b * self._lengths / average)
        return self._norms

    def search(
        self, stems: Sequence[str], limit: int, *, rescore: Sequence[str] = ()
    ) -> list[tuple[int, float]]:
        """The ``limit`` best documents for these query terms as (id, BM25), best first, ties
        by id. Each term counts once per occurrence in ``stems`` (as FTS5 counts phrases).
        ``rescore`` terms gather no documents: they add their part to the score of the
        documents ``stems`` gather (the common words of a query, whose postings are long)."""
        total = len(self)
        if limit <= 0 or not total:
            return []
        all_slots: list[npt.NDArray[np.int32]] = []
        all_scores: list[Floats] = []
        for stem in stems:
            term = self._terms.get(stem)
            scored = self._term_scores(term) if term is not None else None
            if scored is None:
                continue
            all_slots.append(scored[0])
            all_scores.append(scored[1])
        if not all_slots:
            return []
        if len(all_slots) == 1:
            slots, scores = all_slots[0], all_scores[0]
        elif sum(map(len, all_slots)) * 8 < len(self._ids):
            # Few postings: sum per slot over the postings alone, not a pass over every slot.
            slots, where = np.unique(np.concatenate(all_slots), return_inverse=True)
            summed = np.bincount(where, weights=np.concatenate(all_scores), minlength=len(slots))
            scores = np.asarray(summed, dtype=np.float64)
        else:  # one pass summing per slot, term by term (the same sums as adding each term's)
            dense: Floats = np.bincount(
                np.concatenate(all_slots),
                weights=np.concatenate(all_scores),
                minlength=len(self._ids),
            ).astype(np.float64, copy=False)
            slots = np.flatnonzero(dense).astype(np.int32)
            scores = dense[slots]
        if rescore:
            scores = self._rescored(slots, scores, rescore)
        if len(slots) > limit:
            kth = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            keep = scores >= kth
            slots, scores = slots[keep], scores[keep]
        ids = self._ids[slots]
        order = np.lexsort((ids, -scores))[:limit]
        return list(zip(ids[order].tolist(), scores[order].tolist(), strict=True))

    def _rescored(
        self, slots: npt.NDArray[np.int32], scores: Floats, stems: Sequence[str]
    ) -> Floats:
        """``scores`` of ``slots`` plus each ``stems`` term's part where the slot holds it. A
        term's postings are in slot order (segments hold ascending slot ranges), so each
        slot is found by binary search: a cost per candidate, not per posting."""
        out = scores.astype(np.float64, copy=True)
        for stem in stems:
            term = self._terms.get(stem)
            scored = self._term_scores(term) if term is not None else None
            if scored is None or not len(slots):
                continue
            term_slots, parts, _ = scored
            at = np.searchsorted(term_slots, slots)
            inside = at < len(term_slots)
            held = np.zeros(len(slots), dtype=bool)
            held[inside] = term_slots[at[inside]] == slots[inside]
            out[held] += parts[at[held]]
        return out
