"""Absolute relevance: no evidence returns nothing, and a score only depends on the hit."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.fusion import FusionMethod
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.relevance import (
    CosineScale,
    bm25_evidence,
    bm25_idf,
    cosine_scale,
    reference_idf,
)
from kairox.retrieval.search import HybridSearcher
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database

FILES = {
    ".gitignore": "build/\n*.pyc\n.venv/\n",
    "tokens.py": "def configure_tokenizer(name):\n    return name\n",
    "compaction.md": "Compaction summarises the oldest layer of history.\n",
    "notes.txt": "The cat sat on the mat while the dog slept.\n",
    "cli.md": "Run kairox send to talk to the model in one turn.\n",
    "web.md": "The web inspector charts the budget by source.\n",
}


@pytest.fixture
def db(tmp_path: Path) -> Database:
    return Database.open(tmp_path / "home.db")


def indexed(db: Database, root: Path, files: dict[str, str]) -> tuple[HybridSearcher, str]:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    embedder = HashingEmbedder()
    ws = index_workspace(SqliteChunkStore(db), root, embedder=embedder).workspace_id
    return HybridSearcher(SqliteChunkStore(db), embedder), ws


@pytest.mark.parametrize("fusion", list(FusionMethod))
def test_a_query_with_no_evidence_returns_nothing(
    db: Database, tmp_path: Path, fusion: FusionMethod
) -> None:
    searcher, ws = indexed(db, tmp_path / "ws", FILES)

    assert searcher.search(ws, "xyzzy", k=5, fusion=fusion) == []
    assert searcher.search(ws, "xyzzy plugh", k=5, fusion=fusion) == []


def test_scores_are_absolute_not_the_best_of_the_query(db: Database, tmp_path: Path) -> None:
    searcher, ws = indexed(db, tmp_path / "ws", FILES)

    [full] = searcher.search(ws, "compaction summarises", k=5)
    [half] = searcher.search(ws, "compaction xyzzy", k=5)

    assert full.path == half.path == "compaction.md"
    assert full.score > 0.6
    # min-max made the only hit 1.0; half the query's evidence now scores about half
    assert 0.2 < half.score < full.score * 0.75


def test_bm25_evidence_is_measured_against_the_query() -> None:
    idf = bm25_idf(1000, 1)
    assert bm25_evidence(0.0, [idf], reference_idf=idf) == 0.0
    assert bm25_evidence(idf, [idf], reference_idf=idf) == pytest.approx(1.0)
    assert bm25_evidence(idf, [idf, idf], reference_idf=idf) == pytest.approx(0.5)
    # a query of a word in most passages is measured against a common word: little evidence
    common = bm25_idf(1000, 900)
    assert bm25_evidence(common, [common], reference_idf=reference_idf(1000)) < 0.05
    # words in 5% of the passages, all present, are full evidence
    assert bm25_evidence(
        bm25_idf(1000, 50), [bm25_idf(1000, 50)], reference_idf=reference_idf(1000)
    ) == pytest.approx(1.0)


def test_the_idf_is_lucenes_and_never_reaches_zero() -> None:
    # ln(1 + (N - df + 0.5) / (df + 0.5)); FTS5's ln((N - df + 0.5) / (df + 0.5)) was ~0 here
    assert bm25_idf(4, 2) == pytest.approx(math.log(1 + 2.5 / 2.5))
    assert bm25_idf(4, 4) == pytest.approx(math.log(1 + 0.5 / 4.5))
    assert bm25_idf(4, 4) > 0.1
    assert bm25_idf(1000, 1000) > 0


def test_cosines_at_the_noise_level_are_no_evidence() -> None:
    scale = CosineScale(noise=0.2, full=0.7)
    assert scale.evidence(0.1) == 0.0
    assert scale.evidence(0.45) == pytest.approx(0.5)
    assert scale.evidence(0.95) == 1.0
    # hashing cosines only restate word overlap (or a hash collision): never evidence alone
    assert cosine_scale("hashing:384").evidence(0.99) == 0.0


_TRICKY = [
    "dying",
    "relational",
    "hoping",
    "happy",
    "skies",
    "sensibility",
    "mobility",
    "generalization",
    "agreed",
    "ponies",
    "national",
    "conditional",
    "hesitancy",
    "sky",
    "news",
    "cafés",
    "café",
    "naïve",
    "über",
    "Ångström",
    "COVID19",
    "2024",
    "x",
    "a",
    "i",
    "is",
    "as",
    "us",
    "was",
    "this",
    "thesis",
    "analysis",
    "theses",
    "running",
    "runner",
    "ran",
    "flies",
    "flying",
    "happily",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_TRICKY) | st.text("abcdeilnorsty", min_size=1, max_size=9),
             min_size=1, max_size=6),
    st.lists(st.sampled_from(_TRICKY) | st.text("abcdeilnorstyé", min_size=1, max_size=9),
             min_size=0, max_size=40),
)  # fmt: skip
def test_porter_prefilter_never_changes_lexical_evidence(query: list[str], text: list[str]) -> None:
    """``of`` stems only the words that can stem to a query word; the score is the same."""
    from kairox.retrieval.relevance import LexicalEvidence
    from kairox.store.terms import QueryStemmer

    stemmer = QueryStemmer().stems
    words = [w.lower() for w in query]
    plain = LexicalEvidence.build(words, stemmer, lambda stems: {}, 100)
    fast = LexicalEvidence.build(words, stemmer, lambda stems: {}, 100, porter=True)
    passage = " ".join(text)
    assert fast.of(passage) == plain.of(passage)


_WORDS = ["mask", "masks", "masking", "attention", "attent", "a", "x1", "unmask", "maskless"]


@settings(max_examples=200, deadline=None)
@given(
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
    text=st.lists(
        st.sampled_from([*_WORDS, "_", " ", "-", "Mask", "ATTENTION_mask", "9", ".", "ü"]),
        max_size=12,
    ),
)
def test_the_one_scan_of_an_ascii_text_finds_what_splitting_it_finds(
    query: list[str], text: list[str]
) -> None:
    """A hit's lexical evidence is found by one scan of its text for words starting with the
    query stems' prefixes; the same value as splitting it into words and testing each."""
    from dataclasses import replace

    from kairox.retrieval.relevance import LexicalEvidence
    from kairox.store.terms import QueryStemmer

    stemmer = QueryStemmer()
    evidence = LexicalEvidence.build(query, stemmer.stems, lambda s: dict.fromkeys(s, 3), 50,
                                     porter=True)  # fmt: skip
    assert evidence.candidates is not None
    body = "".join(text)
    split = replace(evidence, prefixes=None)  # no scan: every word of the text stemmed
    assert split.candidates is None
    assert evidence.of(body) == split.of(body)
