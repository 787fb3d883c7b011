"""Words, stems and BM25 arithmetic shared by every keyword index the store keeps.

Stems are SQLite FTS5's ``porter unicode61`` tokens, computed in an in-memory FTS5 table, so a query
stems exactly as the indexes do on either store, which rank the same words the same way. The IDF is
Lucene's ``ln(1 + (N - df + 0.5) / (df + 0.5))``: it never reaches zero, so a word found in half of
a four-unit history still counts.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterable, Sequence

from kairox.store.words import keeps_form, words

__all__ = ["QueryStemmer", "bm25_idf", "stemmer", "words"]

CACHE_LIMIT = 50_000
"""Words whose stems a ``QueryStemmer`` keeps; past it the cache starts again."""


def bm25_idf(total: int, df: int) -> float:
    """Lucene's (and tantivy's) BM25 IDF of a term in ``df`` of ``total`` documents: always > 0."""
    df = min(max(df, 0), max(total, 0))
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


class QueryStemmer:
    """Stems words exactly as FTS5's ``porter unicode61`` tokenizer does, in memory: the one
    stemmer of the store's indexes and the in-memory keyword index (``kairox.retrieval.bm25``).

    ``tokens`` gives every token FTS5 makes of a word (almost always one); ``stems`` the first
    (the word itself when FTS5 makes none).
    """

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute("CREATE VIRTUAL TABLE q USING fts5(x, tokenize='porter unicode61')")
        self._conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, 'instance')")
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, ...]] = {}

    def tokens(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        wanted = list(dict.fromkeys(words))
        found: dict[str, tuple[str, ...]] = {}
        missing = []
        for w in wanted:
            if w in self._cache:
                continue
            if keeps_form(w):  # an n-gram or a word with marks is its own token: no FTS5 trip
                found[w] = (w,)
            else:
                missing.append(w)
        for start in range(0, len(missing), 5000):
            found.update(self._tokenise(missing[start : start + 5000]))
        # The answer is read before the cache may be emptied: a word cached before this call is
        # in the answer even when the cache starts again below (a big vocabulary crashed here).
        answer = {w: found[w] if w in found else self._cache[w] for w in wanted}
        if len(self._cache) + len(found) > CACHE_LIMIT:
            self._cache.clear()
        self._cache.update(found)
        return answer

    def stems(self, words: Sequence[str]) -> list[str]:
        cache = self._cache
        try:  # every word stemmed before (a query's, mostly): no lists or dicts to build
            return [t[0] if (t := cache[w]) else w for w in words]
        except KeyError:
            pass
        tokens = self.tokens(words)
        return [tokens[w][0] if tokens[w] else w for w in words]

    def text(self, text: str) -> str:
        """``text`` as its stems, space-separated (what the Postgres history index stores)."""
        return " ".join(self.stems(words(text)))

    def _tokenise(self, words: list[str]) -> dict[str, tuple[str, ...]]:
        with self._lock:
            self._conn.executemany(
                "INSERT INTO q(rowid, x) VALUES (?, ?)", list(enumerate(words, start=1))
            )
            rows = self._conn.execute("SELECT doc, term FROM qv ORDER BY doc, offset").fetchall()
            self._conn.execute("DELETE FROM q")
        out: dict[int, list[str]] = {}
        for doc, term in rows:
            out.setdefault(int(doc), []).append(str(term))
        return {w: tuple(out.get(i, ())) for i, w in enumerate(words, start=1)}


_shared: QueryStemmer | None = None
_shared_lock = threading.Lock()


def stemmer() -> QueryStemmer:
    """The process's stemmer (one in-memory FTS5 table, a cache of stems)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = QueryStemmer()
        return _shared
