"""A search's lexical evidence for its candidates from the keyword index's postings
(``HybridSearcher._select``): which weighted query words each candidate's document holds, so a
candidate with none is passed over unread and a hit's text is scanned only where the postings
cannot decide."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from kairox.retrieval.relevance import LexicalEvidence
from kairox.store.terms import QueryStemmer, words


class LexicalBounds:
    """The lexical evidence of a search's candidates from the keyword index's postings: for
    each, the share of the query's weighted words its document holds in any field, at least
    its text's evidence (``LexicalEvidence.ascii``), and that evidence itself when the text
    and path are ASCII and the path holds none of those words. Otherwise, or for a query with
    a non-ASCII word, the text is scanned (``LexicalEvidence.of``)."""

    def __init__(
        self,
        stemmer: QueryStemmer,
        lexical: LexicalEvidence | None,
        ids: list[int],
        held_stems: Callable[[list[int], list[str]], npt.NDArray[np.bool_]],
    ) -> None:
        """``ids`` are the candidates in ranked order; ``held_stems`` says which of the stems
        each document holds (``KeywordSide.held_stems`` of the scope)."""
        self._lexical = lexical
        self._stemmer = stemmer
        self._stems = list(lexical.weights) if lexical is not None else []
        self._prefixes = [stem[:-1] for stem in self._stems]
        self._held: npt.NDArray[np.bool_] | None = None
        self._shares: list[float] = []  # by candidate: the share of the words it holds
        if lexical is not None and self._stems and lexical.ascii:
            self._held = held_stems(ids, self._stems)
            self._shares = lexical.shares(self._held).tolist()

    def _holds(self, at: int) -> list[str]:
        """The weighted query words the ``at``-th candidate's document holds."""
        assert self._held is not None
        row = self._held[at].tolist()
        return [s for s, h in zip(self._stems, row, strict=True) if h]

    def bound(self, at: int) -> float:
        """At least the lexical evidence of the ``at``-th candidate's text."""
        if self._lexical is None or not self._stems:
            return 0.0
        return 1.0 if self._held is None else self._shares[at]

    def of(self, at: int, path: str, text: str) -> float:
        """The lexical evidence of the ``at``-th candidate's text."""
        lexical = self._lexical
        if lexical is None:
            return 0.0
        if self._held is not None and text.isascii() and path.isascii():
            # The path holds a word whose stem is S only if it holds S minus its last letter
            # (``LexicalEvidence.build``): mostly a substring test tells it holds none.
            lowered = path.lower()
            if not any(map(lowered.__contains__, self._prefixes)):
                return self._shares[at]
            holds = self._holds(at)
            if not any(stem[:-1] in lowered for stem in holds) or set(holds).isdisjoint(
                self._stemmer.stems(words(path))
            ):
                return self._shares[at]
        return lexical.of(text)
