"""The ``sqlite_fts`` knowledge base: documents in their own SQLite FTS5 file, ranked by BM25.

Scores are absolute lexical evidence (``kairox.retrieval.relevance``): the share of the query's
content words a passage holds, weighted by their IDF in this file, so they compare with the
workspace index's. The file, its schema and its SQL are the store's
(``kairox.store.knowledge_base``): the index holds each passage's terms, so Chinese, Japanese and
Korean text is found by a query in the same language.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from kairox.core.errors import RetrievalError, StoreError
from kairox.core.kb_config import SqliteFtsConfig
from kairox.retrieval.knowledge_bases import AddReport, StoreOutcome, load_each
from kairox.retrieval.knowledge_bases._documents import (
    Document,
    query_terms,
)
from kairox.retrieval.relevance import LexicalEvidence
from kairox.retrieval.types import RetrievalHit
from kairox.store.knowledge_base import KbPassageRow, SqliteKnowledgeBaseStore
from kairox.store.protocols import KnowledgeBaseStore
from kairox.store.terms import QueryStemmer


class SqliteFtsKnowledgeBase:
    """BM25 over passages in an FTS5 file. Blocking work runs in a worker thread."""

    def __init__(self, kb_id: str, config: SqliteFtsConfig) -> None:
        self._id = kb_id
        self._config = config
        self._store: KnowledgeBaseStore = SqliteKnowledgeBaseStore(config.path)
        self._stemmer = QueryStemmer()

    @property
    def name(self) -> str:
        return f"kb:{self._id}"

    @property
    def path(self) -> Path:
        return self._config.path

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        terms = query_terms(query)
        if not terms or k <= 0:
            return []
        return await asyncio.to_thread(self._search, terms, k)

    def add_documents(self, paths: Sequence[Path]) -> AddReport:
        """Load files (directories expand); re-adding a file replaces its earlier version."""
        report = load_each(paths, self._put, source=self.name)
        return replace(report, documents=self.count())

    def count(self) -> int:
        """Documents loaded; 0 when the file does not exist yet."""
        return self._store.document_count()

    def close(self) -> None:
        self._store.close()

    def _search(self, terms: list[str], k: int) -> list[RetrievalHit]:
        if not self.path.exists():
            raise RetrievalError(
                self.name,
                f"no index at {self.path}; load documents with `kairox kb add {self._id} FILES…`",
            )
        try:
            rows = self._store.search(terms, k)
            evidence = LexicalEvidence.build(
                terms,
                self._stemmer.stems,
                self._store.document_frequencies,
                self._store.passage_count(),
                porter=True,
            )
        except StoreError as exc:
            raise RetrievalError(self.name, str(exc)) from exc
        return [
            RetrievalHit(
                source=self.name,
                chunk_id=f"{self._id}:{row.passage_id}",
                text=row.text,
                score=evidence.of(f"{row.title}\n{row.text}"),
                path=row.path,
                start_line=row.start_line,
                end_line=row.end_line,
                title=row.title,
            )
            for row in rows
        ]

    def _put(self, doc: Document) -> StoreOutcome:
        passages = [KbPassageRow(p.ordinal, p.start_line, p.end_line, p.text) for p in doc.passages]
        return self._store.put_document(doc.path, doc.title, doc.content_hash, passages)
