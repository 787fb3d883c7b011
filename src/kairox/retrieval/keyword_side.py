"""The keyword side of ``HybridRanker`` (``kairox.retrieval.search``): each scope's in-memory
BM25 index (``kairox.retrieval.bm25``), built from the store's texts on first use or loaded from
the store's saved copy (``kairox.store.keyword_snapshots``), caught up when the scope's
generation moves and saved again once enough of it changed; the query's words, and the common
words that only rescore.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kairox.retrieval import keyword_snapshot
from kairox.retrieval.bm25 import KeywordIndex
from kairox.retrieval.fusion import SearchOptions
from kairox.retrieval.relevance import STOPWORDS
from kairox.store.keyword_snapshots import KeywordSnapshots
from kairox.store.protocols import RankStore
from kairox.store.terms import QueryStemmer, words

MAX_QUERY_TERMS = 64
BUILD_BATCH = 4096
"""Documents read and added to a keyword index at a time while it is built or caught up: the
peak memory of a build is this many documents' words, not the scope's."""
SAVE_CHANGES = 500
"""Documents changed since a scope's keyword index was loaded or saved before it is saved (and
at least 1% of it): small indexes build in a blink, and a few changes are caught up at load
(by the documents' versions) more cheaply than the whole index is written again."""


def query_terms(query: str) -> list[str]:
    """The distinct words of a query, in order, as plain text (no FTS operators survive)."""
    return list(dict.fromkeys(words(query)))[:MAX_QUERY_TERMS]


@dataclass(frozen=True, slots=True)
class Keywords:
    """A scope's keyword index and the generation it is caught up to."""

    generation: int
    index: KeywordIndex


class KeywordSide:
    """Each scope's keyword index and what is asked of it; mixed into ``HybridRanker``, which
    sets these attributes and says each scope's ``generation``."""

    store: RankStore
    options: SearchOptions
    _stemmer: QueryStemmer
    _keywords: dict[str, Keywords]
    _keyword_lock: threading.Lock
    _keys: dict[str, Mapping[int, int]]  # each scope's document versions (digests)
    _unsaved: dict[str, int]  # documents changed since the index was saved
    _changed: dict[str, int]  # documents the last ``sync_keywords`` changed

    def generation(self, scope: str) -> int:
        raise NotImplementedError

    def keyword(self, scope: str, query: str, limit: int) -> list[tuple[int, float]]:
        """BM25 (higher is better) for the query's words (common words only rescore, on big
        indexes)."""
        return self._keyword(scope, self.keyword_terms(scope, query), limit)

    def _keyword(self, scope: str, terms: list[str], limit: int) -> list[tuple[int, float]]:
        return self._keyword_gathered(scope, terms, limit)[0]

    def _keyword_gathered(
        self, scope: str, terms: list[str], limit: int
    ) -> tuple[list[tuple[int, float]], bool]:
        """The keyword hits, and whether they are every document holding one of ``terms``
        (no word left out of gathering, fewer hits than ``limit``: BM25's IDF is never zero)."""
        if not terms:
            return [], True
        stems = self._stemmer.stems(terms)
        with self._keyword_lock:
            index = self._keyword_index(scope)
            gather, rescore = self._split_common(index, stems)
            hits = index.search(gather, limit, rescore=rescore)
        return hits, not rescore and len(hits) < limit

    def held_stems(
        self, scope: str, ids: Sequence[int], stems: Sequence[str]
    ) -> npt.NDArray[np.bool_]:
        """Whether each of the scope's documents ``ids`` (row) holds each of ``stems``
        (column) in any field, from the keyword index's postings: no text is read or split."""
        with self._keyword_lock:
            return self._keyword_index(scope).holding(ids, stems)

    def keyword_terms(self, scope: str, query: str) -> list[str]:
        """The query words the keyword side ranks by: stopwords left out unless nothing else is
        left. Common words are not dropped here: they only stop gathering candidates
        (``gathering_terms``)."""
        terms = query_terms(query)
        return [t for t in terms if t not in STOPWORDS] or terms

    def warm_keywords(self, scope: str) -> None:
        """Catch the scope's keyword index up with the store now (saving it when enough
        changed), so the next search, or the next process, does not build it."""
        with self._keyword_lock:
            self._keyword_index(scope)

    def gathering_terms(self, scope: str, query: str) -> list[str]:
        """The words whose postings gather the keyword side's candidates: on big indexes the
        words found in more than ``common_fraction`` of the scope are left out (the others'
        candidates are rescored with them), unless every word is that common."""
        terms = self.keyword_terms(scope, query)
        stems = self._stemmer.stems(terms)
        with self._keyword_lock:
            gather, _ = self._split_common(self._keyword_index(scope), stems)
        kept = set(gather)
        return [t for t, s in zip(terms, stems, strict=True) if s in kept]

    def _split_common(self, index: KeywordIndex, stems: list[str]) -> tuple[list[str], list[str]]:
        """(stems that gather candidates, common stems that only rescore them). Dropping common
        words is a speed device, never what decides whether anything is found: when every
        word is common, all of them gather."""
        fraction = self.common_fraction(len(index))
        if fraction is None or not stems:
            return stems, []
        df = index.document_frequencies(stems)
        limit = fraction * len(index)
        gather = [s for s in stems if df.get(s, 0) <= limit]
        if not gather:
            return stems, []
        kept = set(gather)
        return gather, [s for s in stems if s not in kept]

    def common_fraction(self, total: int) -> float | None:
        """Words found in more than this fraction of a ``total``-sized corpus leave the keyword
        side; None keeps every word."""
        opts = self.options
        if opts.drop_common_fraction >= 1.0 or total < opts.drop_min_chunks:
            return None
        return opts.drop_common_fraction

    def _statistics(self, scope: str) -> tuple[int, Callable[[list[str]], dict[str, int]]]:
        """The scope's document count and its stems' document frequencies."""
        with self._keyword_lock:
            index = self._keyword_index(scope)
            total = len(index)

        def frequencies(stems: list[str]) -> dict[str, int]:
            with self._keyword_lock:
                return index.document_frequencies(stems)

        return total, frequencies

    def _keyword_index(self, scope: str) -> KeywordIndex:
        """The scope's keyword index, caught up with the store (call under the keyword lock):
        on first use the store's saved index when it has one, else built from the texts; saved
        again once enough of it changed since (``SAVE_CHANGES``)."""
        generation = self.generation(scope)
        entry = self._keywords.get(scope)
        if entry is not None and entry.generation == generation:
            return entry.index
        at: int | None
        if entry is not None:
            index, at = entry.index, entry.generation
        else:
            index, at = self._saved_index(scope)
        if at is not None and at < 0:  # another scope's saved index to start from: save ours
            self._unsaved[scope] = len(index)
        if at != generation:
            self.sync_keywords(scope, index)
            self._unsaved[scope] = self._unsaved.get(scope, 0) + self._changed.pop(scope, 0)
            self._save(scope, generation, index)
        self._keywords[scope] = Keywords(generation, index)
        return index

    def _saved_index(self, scope: str) -> tuple[KeywordIndex, int | None]:
        """The store's saved keyword index of ``scope`` and the generation it was saved at, or
        an empty index (and None) to build."""
        store = self.store
        snapshot = (
            store.load_keyword_snapshot(scope) if isinstance(store, KeywordSnapshots) else None
        )
        loaded = (
            keyword_snapshot.load(
                snapshot.data, weights=tuple(store.keyword_weights), stemmer=self._stemmer
            )
            if snapshot is not None
            else None
        )
        if snapshot is None or loaded is None:
            empty = KeywordIndex(
                store.keyword_weights,
                counted=getattr(store, "keyword_counted", None),
                stemmer=self._stemmer,
            )
            return empty, None
        index, self._keys[scope] = loaded
        return index, snapshot.generation

    def _save(self, scope: str, generation: int, index: KeywordIndex) -> None:
        """Save the index when enough of it changed since it was loaded or saved."""
        store = self.store
        if not isinstance(store, KeywordSnapshots) or self._unsaved.get(scope, 0) < max(
            SAVE_CHANGES, len(index) // 100
        ):
            return
        data = keyword_snapshot.dump(index, self._keys.get(scope, {}))
        store.save_keyword_snapshot(scope, generation, data)
        self._unsaved[scope] = 0

    def sync_keywords(self, scope: str, index: KeywordIndex) -> None:
        """Bring ``index`` to the store's documents of ``scope``: drop the ones gone or
        changed, add the new ones (only their texts are read)."""
        keys = {i: keyword_snapshot.key_digest(key) for i, key in self.store.keyword_keys(scope)}
        if not len(index):
            self._add_documents(scope, index, sorted(keys))
            self._keys[scope] = keys
            self._changed[scope] = len(keys)
            return
        known = self._keys.get(scope, {})
        gone = [i for i, key in known.items() if keys.get(i) != key]
        index.remove(gone)
        added = [i for i, key in keys.items() if known.get(i) != key]
        self._add_documents(scope, index, added)
        self._keys[scope] = keys
        self._changed[scope] = len(gone) + len(added)

    def _add_documents(self, scope: str, index: KeywordIndex, ids: list[int]) -> None:
        """Read and index these documents ``BUILD_BATCH`` at a time: a whole scope's texts
        split into words at once held every word of it as a string (1.6 GB at 68k chunks)."""
        for start in range(0, len(ids), BUILD_BATCH):
            index.add(self.store.keyword_documents(scope, ids[start : start + BUILD_BATCH]))
