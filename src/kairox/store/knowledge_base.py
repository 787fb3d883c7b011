"""The ``sqlite_fts`` knowledge base's file: documents, their passages and an FTS5 index of their
terms, in a SQLite file of its own (so a knowledge base can be copied, shared or deleted alone).

FTS5's ``unicode61`` cannot split Chinese or Japanese (a clause is one token), so the index holds
each passage as its terms (``kairox.store.words``: CJK as character bigrams) joined by spaces;
FTS5 then only stems them (``porter``), as the store's stemmer does for a query. A file indexed
before that is re-indexed from its passages when it is opened, with a progress line.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kairox.store._unicode_classes import MARKS, characters
from kairox.store.db import Database
from kairox.store.migration import Migration
from kairox.store.words import words

log = logging.getLogger(__name__)

_TOKENIZER = "porter unicode61 tokenchars '{}'".format(characters(MARKS).replace("'", "''"))
"""The passages' tokenizer: the stemmer's (``kairox.store.terms``), with combining marks kept
inside words as ``kairox.store.words`` keeps them."""

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
    Migration(
        # The index holds terms, not raw text: it is emptied here and filled again from the
        # passages when the file is opened (``SqliteKnowledgeBaseStore.reindex``).
        "kb_fts_0003_terms",
        """
        DELETE FROM kb_fts;
        CREATE TABLE kb_fts_pending (passage_id INTEGER PRIMARY KEY);
        INSERT INTO kb_fts_pending(passage_id) SELECT passage_id FROM kb_passages;
        """,
    ),
    Migration(
        # Words keep their combining marks and Thai, Lao, Myanmar and Khmer runs become cluster
        # bigrams (``kairox.store.words``); FTS5's ``unicode61`` would cut them at the marks
        # (``बिल्ली`` and ``बल्ला`` both ``ब ल ल``), so the marks are token characters. Every
        # passage is indexed again, as for 0003.
        "kb_fts_0004_script_terms",
        f"""
        DROP TABLE kb_fts_vocab;
        DROP TABLE kb_fts;
        CREATE VIRTUAL TABLE kb_fts USING fts5(title, text, tokenize = "{_TOKENIZER}");
        CREATE VIRTUAL TABLE kb_fts_vocab USING fts5vocab(kb_fts, 'row');
        INSERT OR IGNORE INTO kb_fts_pending(passage_id) SELECT passage_id FROM kb_passages;
        """,
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

_REINDEX_BATCH = 500

StoreOutcome = Literal["added", "replaced", "unchanged"]


@dataclass(frozen=True, slots=True)
class KbPassageRow:
    """One passage to store: its place in its document and its text."""

    ordinal: int
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True, slots=True)
class KbPassageHit:
    """One passage found by a search, best first."""

    passage_id: int
    text: str
    start_line: int
    end_line: int
    path: str
    title: str


def terms_text(text: str) -> str:
    """What the FTS5 index holds for ``text``: its terms, space-separated."""
    return " ".join(words(text))


class SqliteKnowledgeBaseStore:
    """``KnowledgeBaseStore`` on a SQLite file. Blocking; callers run it off the event loop."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: Database | None = None
        self._lock = threading.Lock()

    def exists(self) -> bool:
        return self.path.exists()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def document_count(self) -> int:
        if not self.exists():
            return 0
        row = self._database().query_one("SELECT count(*) AS n FROM kb_documents")
        return int(row["n"]) if row is not None else 0

    def passage_count(self) -> int:
        row = self._database().query_one("SELECT count(*) AS n FROM kb_passages")
        return int(row["n"]) if row is not None else 0

    def search(self, terms: Sequence[str], k: int) -> list[KbPassageHit]:
        """The ``k`` passages best matching any of ``terms`` (words of ``kairox.store.words``),
        by FTS5's BM25 with the title weighted twice."""
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        rows = self._database().query(_SEARCH_SQL, (match, k))
        return [
            KbPassageHit(
                passage_id=int(r["passage_id"]),
                text=str(r["text"]),
                start_line=int(r["start_line"]),
                end_line=int(r["end_line"]),
                path=str(r["path"]),
                title=str(r["title"]),
            )
            for r in rows
        ]

    def document_frequencies(self, stems: Sequence[str]) -> dict[str, int]:
        db = self._database()
        counts = {}
        for stem in stems:
            found = db.query_one("SELECT doc FROM kb_fts_vocab WHERE term = ?", (stem,))
            counts[stem] = int(found["doc"]) if found is not None else 0
        return counts

    def put_document(
        self, path: str, title: str, content_hash: str, passages: Sequence[KbPassageRow]
    ) -> StoreOutcome:
        """Store a document's passages; one already stored under ``path`` is replaced, or left
        as it is when its content hash is the same."""
        db = self._database(create=True)
        title_terms = terms_text(title)
        with db.atomic() as conn:
            row = conn.execute(
                "SELECT doc_id, content_hash FROM kb_documents WHERE path = ?", (path,)
            ).fetchone()
            if row is not None and row["content_hash"] == content_hash:
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
                    (title, content_hash, row["doc_id"]),
                )
                doc_id = int(row["doc_id"])
            else:
                cursor = conn.execute(
                    "INSERT INTO kb_documents(path, title, content_hash) VALUES (?, ?, ?)",
                    (path, title, content_hash),
                )
                doc_id = int(cursor.lastrowid or 0)
            for passage in passages:
                cursor = conn.execute(
                    "INSERT INTO kb_passages(doc_id, ordinal, start_line, end_line, text) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (doc_id, passage.ordinal, passage.start_line, passage.end_line, passage.text),
                )
                conn.execute(
                    "INSERT INTO kb_fts(rowid, title, text) VALUES (?, ?, ?)",
                    (cursor.lastrowid, title_terms, terms_text(passage.text)),
                )
        return "added" if row is None else "replaced"

    def _reindex(self, db: Database) -> int:
        """Index the passages a migration left pending (a file indexed before the word splitter
        changed), in batches, with a progress line; returns how many."""
        row = db.query_one("SELECT count(*) AS n FROM kb_fts_pending")
        total = int(row["n"]) if row is not None else 0
        if not total or db.readonly:
            return 0
        log.warning("re-indexing %s: %d passages for the new search terms", self.path, total)
        done = 0
        while True:
            with db.atomic() as conn:
                rows = conn.execute(
                    "SELECT q.passage_id, p.text, d.title FROM kb_fts_pending q "
                    "JOIN kb_passages p ON p.passage_id = q.passage_id "
                    "JOIN kb_documents d ON d.doc_id = p.doc_id ORDER BY q.passage_id LIMIT ?",
                    (_REINDEX_BATCH,),
                ).fetchall()
                conn.executemany(
                    "INSERT INTO kb_fts(rowid, title, text) VALUES (?, ?, ?)",
                    [
                        (r["passage_id"], terms_text(r["title"]), terms_text(r["text"]))
                        for r in rows
                    ],
                )
                if rows:
                    conn.execute(
                        "DELETE FROM kb_fts_pending WHERE passage_id <= ?",
                        (rows[-1]["passage_id"],),
                    )
                else:  # the rest were passages deleted since the migration
                    conn.execute("DELETE FROM kb_fts_pending")
            if not rows:
                return done
            done += len(rows)
            log.warning("re-indexing %s: %d/%d passages", self.path, done, total)

    def _database(self, *, create: bool = False) -> Database:
        with self._lock:
            if self._db is None:
                if not create and not self.exists():
                    raise FileNotFoundError(self.path)
                db = Database.open(self.path, MIGRATIONS)
                self._reindex(db)
                self._db = db
            return self._db
