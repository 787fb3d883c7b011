"""A workspace search's hits get their lexical evidence from the keyword index's postings and
read only their own rows: the same hits and scores as reading and scanning every candidate."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.retrieval.bm25 import KeywordIndex
from kairox.retrieval.embeddings.base import FloatMatrix, l2_normalise
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.search import HybridSearcher
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.records import StoredChunk
from kairox.store.terms import QueryStemmer, words

HOUR_NS = 3600 * 10**9

# Paths that hold query words, words that stem alike, non-ASCII texts, stopwords.
FILES = {
    "mask/attention.py": "def attention_mask(x):\n    return x  # masking the padded tokens",
    "mask/notes.md": "the runner runs; a masked runner ran",
    "runner/mask.txt": "nothing about it here, only the path",
    "docs/café.md": "un café naïve près de la gare, attention",
    "docs/数据库.md": "我们用什么数据库 mask",
    "docs/plain.md": "the of and to in",
    "src/alpha.py": "alpha beta gamma\nalpha delta",
    "src/beta.py": "beta beta beta masking attention",
    "src/runs.py": "runs running runner attention mask",
}
QUERIES = [
    "attention mask",
    "runner",
    "mask",
    "café attention",
    "数据库",
    "the of",
    "alpha beta masking",
    "runs docs",
    "path only here",
    "src",
]


class WordsEmbedder:
    """A small 'semantic' embedder whose cosines are evidence: which of a few words a text has."""

    WORDS = ("mask", "runner", "alpha", "attention")

    @property
    def model_id(self) -> str:
        return "words:4"

    @property
    def dimensions(self) -> int:
        return 4

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        rows = [[1.0 if w in t.lower() else 0.0 for w in self.WORDS] for t in texts]
        return l2_normalise(np.asarray(rows, dtype=np.float32) + 1e-3)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "kairox.db")
    yield database
    database.close()


def searcher_of(db: Database, root: Path, embedder: HashingEmbedder | WordsEmbedder) -> tuple[
    HybridSearcher, str
]:  # fmt: skip
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        stamp = path.stat().st_mtime_ns - HOUR_NS
        os.utime(path, ns=(stamp, stamp))
    report = index_workspace(SqliteChunkStore(db), root, embedder=embedder)
    return HybridSearcher(SqliteChunkStore(db), embedder), report.workspace_id


def scanned(
    searcher: HybridSearcher, ws: str, query: str, k: int, method: FusionMethod
) -> list[tuple[int, float, float | None, float | None]]:
    """The hits as a search made them before: every candidate's row read and its text scanned."""
    method = searcher.method(method)
    with searcher.pinned():
        terms = searcher.keyword_terms(ws, query)
        scale = searcher.evidence(ws, terms)
        depth = max(searcher.options.candidates, k)
        ranked = searcher.ranked(ws, query, terms, scale, depth, method)
        lexical = (
            searcher.lexical_evidence(ws, query) if method is not FusionMethod.VECTOR else None
        )
        rows = {c.id: c for c in searcher.chunks.get_chunks(ws, [r[0] for r in ranked])}
    out: list[tuple[int, float, float | None, float | None]] = []
    ceiling = 1.0
    for cid, _, bm25, cosine in ranked:
        lex = lexical.of(rows[cid].text) if lexical is not None else 0.0
        score = max(lex, scale.cosine(cosine) if method is not FusionMethod.BM25 else 0.0)
        if score <= 0.0:
            continue
        ceiling = min(score, ceiling)
        out.append((cid, ceiling, bm25, cosine))
        if len(out) == k:
            break
    return out


@pytest.mark.parametrize(
    "embedder", [HashingEmbedder(64), WordsEmbedder()], ids=["hashing", "words"]
)
def test_hits_score_as_scanning_every_candidate_did(
    db: Database, tmp_path: Path, embedder: HashingEmbedder | WordsEmbedder
) -> None:
    searcher, ws = searcher_of(db, tmp_path / "ws", embedder)
    found_any = False
    for query in QUERIES:
        for method in FusionMethod:
            for k in (1, 2, 3, 20):
                hits = searcher.search(ws, query, k=k, fusion=method)
                got = [(h.chunk_id, h.score, h.bm25, h.cosine) for h in hits]
                assert got == scanned(searcher, ws, query, k, method), (query, method, k)
                found_any = found_any or bool(got)
    assert found_any


def test_only_the_rows_of_hits_are_read(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searcher, ws = searcher_of(db, tmp_path / "ws", HashingEmbedder(64))
    read: list[int] = []
    get_chunks = searcher.chunks.get_chunks

    def spy(workspace_id: str, ids: Sequence[int]) -> list[StoredChunk]:
        read.extend(ids)
        return get_chunks(workspace_id, ids)

    monkeypatch.setattr(searcher.chunks, "get_chunks", spy)
    hits = searcher.search(ws, "attention mask", k=2, fusion=FusionMethod.BM25)
    assert len(hits) == 2
    assert read == [h.chunk_id for h in hits]  # not twice k candidates
    read.clear()
    # Only stopwords: the keyword side ranks by them, but no hit can have evidence.
    assert searcher.search(ws, "the of", k=5, fusion=FusionMethod.BM25) == []
    assert searcher.keyword(ws, "the of", 10)
    assert read == []


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.tuples(
            st.integers(1, 30),
            st.lists(
                st.sampled_from(["run", "runs", "runner", "mask", "café", "the", "x1"]), max_size=6
            ),
        ),
        max_size=25,
    ),
    removed=st.lists(st.integers(1, 30), max_size=5),
)
def test_holding_says_which_stems_each_document_has(
    docs: list[tuple[int, list[str]]], removed: list[int]
) -> None:
    stemmer = QueryStemmer()
    index = KeywordIndex((0.5, 1.0), stemmer=stemmer)
    expected: dict[int, set[str]] = {}
    for doc_id, body in docs:  # one at a time: a re-added id replaces its document
        text = " ".join(body)
        index.add([(doc_id, (f"p/{doc_id}.py", text))])
        tokens = stemmer.tokens(words(f"p/{doc_id}.py {text}"))
        expected[doc_id] = {t for w in tokens for t in tokens[w]}
    index.remove(removed)
    for doc_id in removed:
        expected.pop(doc_id, None)
    stems = stemmer.stems(["run", "mask", "café", "the", "p", "py", "x1", "absent"])
    for candidate in (index, KeywordIndex.from_state(index.state(), stemmer=stemmer)):
        ids = list(range(0, 32))
        held = candidate.holding(ids, stems)
        assert held.shape == (len(ids), len(stems))
        for row, doc_id in zip(held.tolist(), ids, strict=True):
            want = expected.get(doc_id, set())
            assert row == [s in want for s in stems], doc_id


@pytest.mark.parametrize("common", [False, True], ids=["every word gathers", "common words"])
def test_lexical_first_on_hashing_scans_only_the_keyword_hits_rows_and_finds_the_same(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, common: bool
) -> None:
    """With ``hashing`` (cosines are no evidence) lexical-first's fill-ins can be hits only by
    holding a query word outside the keyword hits: when the keyword side returned every
    document holding one, the scope's matrix is not scanned, and the hits are the same."""
    searcher, ws = searcher_of(db, tmp_path / "ws", HashingEmbedder(64))
    if common:  # words in over a third of the chunks only rescore: fill-ins may hold them
        searcher.options = SearchOptions(drop_min_chunks=1, drop_common_fraction=0.34)
    full = HybridSearcher(searcher.chunks, searcher.embedder, searcher.options)
    gathered = full._keyword_gathered
    monkeypatch.setattr(full, "_keyword_gathered", lambda *a: (gathered(*a)[0], False))
    scans: list[int] = []
    cosines = searcher._cosines
    monkeypatch.setattr(searcher, "_cosines", lambda q, m: scans.append(1) or cosines(q, m))
    for query in [*QUERIES, "masking runner alpha", "gare"]:
        for k in (1, 2, 3, 20):
            hits = searcher.search(ws, query, k=k, fusion=FusionMethod.LEXICAL_FIRST)
            want = full.search(ws, query, k=k, fusion=FusionMethod.LEXICAL_FIRST)
            assert hits == want, (query, k)
    assert (len(scans) > 0) is common


@pytest.mark.parametrize(
    "query", [*QUERIES, "masks mask masking", "the runner of", "数据库 café gare", "zzz"]
)
def test_query_evidence_is_the_evidence_and_the_lexical_evidence(
    db: Database, tmp_path: Path, query: str
) -> None:
    """A search finds both from one lookup of its words' document frequencies: the same as
    finding each on its own (stopwords only, stems twice, CJK, absent words)."""
    searcher, ws = searcher_of(db, tmp_path / "ws", HashingEmbedder(64))
    terms = searcher.keyword_terms(ws, query)
    scale, lexical = searcher.query_evidence(ws, query, terms)
    assert scale == searcher.evidence(ws, terms)
    assert lexical == searcher.lexical_evidence(ws, query)
    assert searcher.query_evidence(ws, query, terms, lexical=False) == (scale, None)
