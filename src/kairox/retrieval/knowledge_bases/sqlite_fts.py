"""The ``sqlite_fts`` knowledge base: documents in their own SQLite FTS5 file, ranked by BM25.

Scores are absolute lexical evidence (``kairox.retrieval.relevance``): the share of the query's
content words a passage holds, weighted by their IDF in this file, so they compare with the
workspace index's.

The file is separate from the home database so a knowledge base can be copied, shared or
deleted on its own. Its schema goes through the same named-migration mechanism as the store.
"""

from __future__ import annotations

import asyncio
import threading
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
from kairox.store.db import Database
from kairox.store.migration import Migration
from kairox.store.terms import QueryStemmer

MIGRATIONS = (
    Migration(
        "kb_fts_0001_documents",
        """
        CREATE TABLE kb_documents (
            doc_id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            added_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        );
        CREATE TABLE kb_passages (
            passage_id INTEGER PRIMARY KEY,
            doc_id INTEGER NOT NULL REFERENCES kb_documents(doc_id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX kb_passages_by_doc ON kb_passages(doc_id, ordinal);
        CREATE VIRTUAL TABLE kb_fts USING fts5(title, text, tokenize = 'porter unicode61');
        """,
    ),
    Migration(
        "kb_fts_0002_vocab",
        "CREATE VIRTUAL TABLE kb_fts_vocab USING fts5vocab(kb_fts, 'row');",
    ),
)

_SEARCH_SQL = """
SELECT p.passage_id, p.text, p.start_line, p.end_line, d.path, d.title,
       bm25(kb_fts, 2.0, 1.0) AS rank
FROM kb_fts
JOIN kb_passages p ON p.passage_id = kb_fts.rowid
JOIN kb_documents d ON d.doc_id = p.doc_id
WHERE kb_fts MATCH ?
ORDER BY rank, p.passage_id
LIMIT ?
"""


class SqliteFtsKnowledgeBase:
    """BM25 over passages in an FTS5 file. Blocking work runs in a worker thread."""

    def __init__(self, kb_id: str, config: SqliteFtsConfig) -> None:
        self._id = kb_id
        self._config = config
        self._db: Database | None = None
        self._open_lock = threading.Lock()
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
        db = self._database(create=True)
        report = load_each(paths, lambda doc: self._store(db, doc), source=self.name)
        return replace(report, documents=self.count())

    def count(self) -> int:
        """Documents loaded; 0 when the file does not exist yet."""
        if not self.path.exists():
            return 0
        row = self._database(create=False).query_one("SELECT count(*) AS n FROM kb_documents")
        return int(row["n"]) if row is not None else 0

    def close(self) -> None:
        with self._open_lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _search(self, terms: list[str], k: int) -> list[RetrievalHit]:
        if not self.path.exists():
            raise RetrievalError(
                self.name,
                f"no index at {self.path}; load documents with `kairox kb add {self._id} FILES…`",
            )
        match = " OR ".join(f'"{term}"' for term in terms)
        db = self._database(create=False)
        try:
            rows = db.query(_SEARCH_SQL, (match, k))
            evidence = self._evidence(db, terms)
        except StoreError as exc:
            raise RetrievalError(self.name, str(exc)) from exc
        return [
            RetrievalHit(
                source=self.name,
                chunk_id=f"{self._id}:{row['passage_id']}",
                text=row["text"],
                score=evidence.of(f"{row['title']}\n{row['text']}"),
                path=row["path"],
                start_line=row["start_line"],
                end_line=row["end_line"],
                title=row["title"],
            )
            for row in rows
        ]

    def _evidence(self, db: Database, terms: list[str]) -> LexicalEvidence:
        row = db.query_one("SELECT count(*) AS n FROM kb_passages")
        total = int(row["n"]) if row is not None else 0

        def df(stems: list[str]) -> dict[str, int]:
            counts = {}
            for stem in stems:
                found = db.query_one("SELECT doc FROM kb_fts_vocab WHERE term = ?", (stem,))
                counts[stem] = int(found["doc"]) if found is not None else 0
            return counts

        return LexicalEvidence.build(terms, self._stemmer.stems, df, total, porter=True)

    def _store(self, db: Database, doc: Document) -> StoreOutcome:
        with db.atomic() as conn:
            row = conn.execute(
                "SELECT doc_id, content_hash FROM kb_documents WHERE path = ?", (doc.path,)
            ).fetchone()
            if row is not None and row["content_hash"] == doc.content_hash:
                return "unchanged"
            if row is not None:
                conn.execute(
                    "DELETE FROM kb_fts WHERE rowid IN "
                    "(SELECT passage_id FROM kb_passages WHERE doc_id = ?)",
                    (row["doc_id"],),
                )
                conn.execute("DELETE FROM kb_passages WHERE doc_id = ?", (row["doc_id"],))
                conn.execute(
                    "UPDATE kb_documents SET title = ?, content_hash = ?, "
                    "added_at = CURRENT_TIMESTAMP WHERE doc_id = ?",
                    (doc.title, doc.content_hash, row["doc_id"]),
                )
                doc_id = int(row["doc_id"])
            else:
                cursor = conn.execute(
                    "INSERT INTO kb_documents(path, title, content_hash) VALUES (?, ?, ?)",
                    (doc.path, doc.title, doc.content_hash),
                )
                doc_id = int(cursor.lastrowid or 0)
            for passage in doc.passages:
                cursor = conn.execute(
                    "INSERT INTO kb_passages(doc_id, ordinal, start_line, end_line, text) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (doc_id, passage.ordinal, passage.start_line, passage.end_line, passage.text),
                )
                conn.execute(
                    "INSERT INTO kb_fts(rowid, title, text) VALUES (?, ?, ?)",
                    (cursor.lastrowid, doc.title, passage.text),
                )
        return "added" if row is None else "replaced"

    def _database(self, *, create: bool) -> Database:
        with self._open_lock:
            if self._db is None:
                if not create and not self.path.exists():
                    raise RetrievalError(self.name, f"no index at {self.path}")
                self._db = Database.open(self.path, MIGRATIONS)
            return self._db
