"""The ``tantivy`` knowledge base: passages in a tantivy index directory (the ``tantivy`` extra).

tantivy brings stemming, BM25 and fast segment merges for larger document sets than FTS5 likes.
User text never reaches its query parser as syntax: the query is rebuilt from quoted words.
tantivy's English tokenizer cannot split Chinese or Japanese and drops any token over 40 bytes (a
Chinese clause), so each passage is also indexed as its terms (``kairox.store.words``: CJK as
character bigrams) in fields that are searched and not stored; an index made before those fields
is rebuilt from its stored passages when it is opened, with a progress line.
Scores are absolute lexical evidence (``kairox.retrieval.relevance``): the share of the query's
content words a passage holds, weighted by their IDF in this index.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import shutil
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kairox.core.errors import MissingExtra, RetrievalError, StoreError
from kairox.core.kb_config import TantivyConfig
from kairox.retrieval.knowledge_bases import AddReport, StoreOutcome, load_each
from kairox.retrieval.knowledge_bases._documents import (
    Document,
    query_terms,
)
from kairox.retrieval.relevance import LexicalEvidence
from kairox.retrieval.types import RetrievalHit
from kairox.store.terms import QueryStemmer
from kairox.store.words import TERMS_VERSION, words

log = logging.getLogger(__name__)

_WRITER_HEAP = 32_000_000
_STORED = ("title", "text", "path", "content_hash")
_INTEGERS = ("ordinal", "start_line", "end_line")


def _tantivy() -> Any:
    try:
        import tantivy
    except ImportError as exc:
        raise MissingExtra("tantivy knowledge base", "tantivy") from exc
    return tantivy


class TantivyKnowledgeBase:
    """BM25 over stemmed passages. Blocking work runs in a worker thread."""

    def __init__(self, kb_id: str, config: TantivyConfig) -> None:
        self._id = kb_id
        self._config = config
        self._tantivy = _tantivy()
        self._index: Any = None
        self._lock = threading.Lock()
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
        index = self._open(create=True)
        with self._lock:
            try:
                writer = index.writer(_WRITER_HEAP, 1)
            except ValueError as exc:
                raise StoreError(
                    f"cannot write the tantivy index at {self.path}: {exc}; "
                    "another process may be adding documents, retry when it finishes"
                ) from exc
            delete = getattr(writer, "delete_documents_by_term", None) or writer.delete_documents

            def store(doc: Document) -> StoreOutcome:
                previous = self._stored_hash(index, doc.path)
                if previous == doc.content_hash:
                    return "unchanged"
                if previous is not None:
                    delete("path", doc.path)
                for fields in self._documents(doc):
                    writer.add_document(fields)
                return "added" if previous is None else "replaced"

            report = load_each(paths, store, source=self.name)
            writer.commit()
            writer.wait_merging_threads()
            index.reload()
        return replace(report, documents=self.count())

    def count(self) -> int:
        """Documents loaded; 0 when the index does not exist yet."""
        if not self._exists():
            return 0
        index = self._open(create=False)
        query = self._tantivy.Query.term_query(index.schema, "ordinal", 0)
        return int(index.searcher().search(query, 1, count=True).count or 0)

    def _search(self, terms: list[str], k: int) -> list[RetrievalHit]:
        if not self._exists():
            raise RetrievalError(
                self.name,
                f"no index at {self.path}; load documents with `kairox kb add {self._id} FILES…`",
            )
        index = self._open(create=False)
        text = " ".join(f'"{term}"' for term in terms)
        try:
            query = index.parse_query(
                text, ["title_terms", "text_terms"], field_boosts={"title_terms": 2.0}
            )
            searcher = index.searcher()
            result = searcher.search(query, k)
            evidence = LexicalEvidence.build(
                terms,
                self._stemmer.stems,
                lambda stems: {s: int(searcher.doc_freq("text_terms", s)) for s in stems},
                int(searcher.num_docs),
            )
        except ValueError as exc:
            raise RetrievalError(self.name, f"tantivy search failed: {exc}") from exc
        hits: list[RetrievalHit] = []
        for _score, address in result.hits:
            doc = searcher.doc(address)
            path = _first(doc, "path")
            ordinal = int(_first(doc, "ordinal"))
            digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:12]
            hits.append(
                RetrievalHit(
                    source=self.name,
                    chunk_id=f"{self._id}:{digest}:{ordinal}",
                    text=_first(doc, "text"),
                    score=evidence.of(f"{_first(doc, 'title')}\n{_first(doc, 'text')}"),
                    path=path,
                    start_line=int(_first(doc, "start_line")),
                    end_line=int(_first(doc, "end_line")),
                    title=_first(doc, "title"),
                )
            )
        return hits

    def _documents(self, loaded: Document) -> list[Any]:
        docs = []
        for passage in loaded.passages:
            doc = self._tantivy.Document()
            self._fill(
                doc,
                {"title": loaded.title, "text": passage.text, "path": loaded.path,
                 "content_hash": loaded.content_hash},
                {"ordinal": passage.ordinal, "start_line": passage.start_line,
                 "end_line": passage.end_line},
            )  # fmt: skip
            docs.append(doc)
        return docs

    @staticmethod
    def _fill(doc: Any, texts: dict[str, str], integers: dict[str, int]) -> None:
        for field, value in texts.items():
            doc.add_text(field, value)
        for field, number in integers.items():
            doc.add_integer(field, number)
        doc.add_text("title_terms", " ".join(words(texts["title"])))
        doc.add_text("text_terms", " ".join(words(texts["text"])))

    def _stored_hash(self, index: Any, path: str) -> str | None:
        query = self._tantivy.Query.term_query(index.schema, "path", path)
        searcher = index.searcher()
        result = searcher.search(query, 1)
        if not result.hits:
            return None
        return str(_first(searcher.doc(result.hits[0][1]), "content_hash"))

    def _exists(self) -> bool:
        return self.path.is_dir() and bool(self._tantivy.Index.exists(str(self.path)))

    def _open(self, *, create: bool) -> Any:
        if self._index is not None:
            return self._index
        if not create and not self._exists():
            raise RetrievalError(self.name, f"no index at {self.path}")
        try:
            existed = self._exists()
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                index = self._tantivy.Index(self._schema(), path=str(self.path), reuse=True)
                if existed and self._terms_version() != TERMS_VERSION:
                    del index  # its terms were split by another version of the splitter
                    index = self._rebuild()
            except ValueError as exc:
                if "schema does not match" not in str(exc):
                    raise
                index = self._rebuild()
            if self._terms_version() != TERMS_VERSION:
                self._version_file.write_text(f"{TERMS_VERSION}\n")
            self._index = index
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot open the tantivy index at {self.path}: {exc}") from exc
        return self._index

    @property
    def _version_file(self) -> Path:
        """Which version of the word splitter (``TERMS_VERSION``) made the index's terms."""
        return self.path / "kairox-terms-version"

    def _terms_version(self) -> int:
        try:
            return int(self._version_file.read_text().strip())
        except (OSError, ValueError):
            return 2  # indexes made before the file was written hold version 2's terms

    def _rebuild(self) -> Any:
        """An index made before the terms fields, or by another version of the word splitter,
        rebuilt from its stored passages beside it, then put in its place (the old one stays
        until the new one is whole)."""
        old = self._tantivy.Index.open(str(self.path))
        searcher = old.searcher()
        total = int(searcher.num_docs)
        log.warning("re-indexing %s: %d passages for the new search terms", self.path, total)
        fresh = self.path.with_name(self.path.name + ".reindex")
        shutil.rmtree(fresh, ignore_errors=True)
        fresh.mkdir(parents=True)
        index = self._tantivy.Index(self._schema(), path=str(fresh))
        writer = index.writer(_WRITER_HEAP, 1)
        result = searcher.search(self._tantivy.Query.all_query(), max(total, 1))
        for done, (_score, address) in enumerate(result.hits, start=1):
            stored = searcher.doc(address)
            doc = self._tantivy.Document()
            self._fill(
                doc,
                {f: str(_first(stored, f)) for f in _STORED},
                {f: int(_first(stored, f) or 0) for f in _INTEGERS},
            )
            writer.add_document(doc)
            if done % 1000 == 0:
                log.warning("re-indexing %s: %d/%d passages", self.path, done, total)
        writer.commit()
        writer.wait_merging_threads()
        del old, searcher, index, writer
        retired = self.path.with_name(self.path.name + ".old")
        shutil.rmtree(retired, ignore_errors=True)
        self.path.rename(retired)
        fresh.rename(self.path)
        shutil.rmtree(retired, ignore_errors=True)
        log.warning("re-indexing %s: %d/%d passages", self.path, total, total)
        return self._tantivy.Index(self._schema(), path=str(self.path), reuse=True)

    def _schema(self) -> Any:
        builder = self._tantivy.SchemaBuilder()
        builder.add_text_field("title", stored=True, tokenizer_name="en_stem")
        builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
        builder.add_text_field("path", stored=True, tokenizer_name="raw")
        builder.add_text_field("content_hash", stored=True, tokenizer_name="raw")
        builder.add_text_field("title_terms", stored=False, tokenizer_name="en_stem")
        builder.add_text_field("text_terms", stored=False, tokenizer_name="en_stem")
        builder.add_integer_field("ordinal", stored=True, indexed=True)
        builder.add_integer_field("start_line", stored=True)
        builder.add_integer_field("end_line", stored=True)
        return builder.build()


def _first(doc: Any, field: str) -> Any:
    values = doc[field]
    return values[0] if values else ""
