"""Hybrid search: FTS syntax as plain text, isolation, fusion laws, cache invalidation."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kairox.retrieval.embeddings.base import FloatMatrix, l2_normalise
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.relevance import DEFAULT_FLOOR
from kairox.retrieval.search import HybridSearcher, query_terms
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database

HOUR_NS = 3600 * 10**9


class CompassEmbedder:
    """A tiny 'semantic' embedder: a text's vector says which compass words it contains."""

    WORDS = ("north", "south", "east", "west")

    @property
    def model_id(self) -> str:
        return "compass:4"

    @property
    def dimensions(self) -> int:
        return 4

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        rows = [[1.0 if w in t.lower() else 0.0 for w in self.WORDS] + [0.0] for t in texts]
        matrix = np.asarray(rows, dtype=np.float32)[:, :4] + 1e-3
        return l2_normalise(matrix)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "kairox.db")
    yield database
    database.close()


def make_workspace(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        stamp = path.stat().st_mtime_ns - HOUR_NS
        os.utime(path, ns=(stamp, stamp))
    return root


CORPUS = {
    "colon.txt": "the colon: value pairs and (parentheses) in text",
    "near.txt": "the near field of an antenna, NEAR zero",
    "quote.txt": 'he said "hello" to the crowd',
    "star.txt": "wildcard star* patterns and the caret ^ sign",
    "minus.txt": "well-known hyphen-separated words",
    "runner.txt": "the runner runs every morning",
}


@pytest.fixture
def indexed(db: Database, tmp_path: Path) -> tuple[HybridSearcher, str]:
    root = make_workspace(tmp_path / "ws", CORPUS)
    embedder = HashingEmbedder(64)
    report = index_workspace(SqliteChunkStore(db), root, embedder=embedder)
    return HybridSearcher(SqliteChunkStore(db), embedder), report.workspace_id


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("colon:value", "colon.txt"),
        ("(parentheses", "colon.txt"),
        ("NEAR(antenna zero)", "near.txt"),
        ('"hello', "quote.txt"),
        ("star*", "star.txt"),
        ("^caret", "star.txt"),
        ("-hyphen separated", "minus.txt"),
        ("AND OR NOT runner", "runner.txt"),
        ("running", "runner.txt"),  # porter stemming
    ],
)
def test_fts_syntax_is_plain_text(
    indexed: tuple[HybridSearcher, str], query: str, expected: str
) -> None:
    searcher, ws = indexed
    for fusion in (FusionMethod.BM25, FusionMethod.AUTO):
        hits = searcher.search(ws, query, k=3, fusion=fusion)
        assert hits and hits[0].path == expected


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=200))
def test_arbitrary_text_never_raises(indexed: tuple[HybridSearcher, str], query: str) -> None:
    searcher, ws = indexed
    hits = searcher.search(ws, query, k=5)
    assert len(hits) <= 5
    assert all(h.workspace_id == ws for h in hits)


def test_query_terms_are_plain_words() -> None:
    assert query_terms('a "b" NEAR(c*) a') == ["a", "b", "near", "c"]
    assert query_terms("  ---  ") == []


def test_empty_query_and_zero_k_return_nothing(indexed: tuple[HybridSearcher, str]) -> None:
    searcher, ws = indexed
    assert searcher.search(ws, "   ", k=5) == []
    assert searcher.search(ws, "runner", k=0) == []


def test_workspaces_are_isolated(db: Database, tmp_path: Path) -> None:
    shared = {"notes.txt": "north shared words appear in both workspaces"}
    root_a = make_workspace(tmp_path / "a", {**shared, "only_a.txt": "apple north"})
    root_b = make_workspace(tmp_path / "b", {**shared, "only_b.txt": "banana north"})
    embedder = CompassEmbedder()
    ws_a = index_workspace(SqliteChunkStore(db), root_a, embedder=embedder).workspace_id
    ws_b = index_workspace(SqliteChunkStore(db), root_b, embedder=embedder).workspace_id
    searcher = HybridSearcher(SqliteChunkStore(db), embedder)
    for fusion in FusionMethod:
        hits = searcher.search(ws_a, "north shared banana apple", k=10, fusion=fusion)
        assert hits, fusion
        assert {h.workspace_id for h in hits} == {ws_a}
        assert "only_b.txt" not in {h.path for h in hits}
    b_hits = searcher.search(ws_b, "banana", k=10, fusion=FusionMethod.BM25)
    assert [h.path for h in b_hits] == ["only_b.txt"]


def test_lexical_first_keeps_bm25_order_and_never_fills_in_noise(
    db: Database, tmp_path: Path
) -> None:
    files = {f"doc{i}.txt": f"topic words {'zebra ' * (i + 1)}filler text" for i in range(5)}
    files["other.txt"] = "completely unrelated content"
    root = make_workspace(tmp_path / "ws", files)
    embedder = HashingEmbedder(64)
    ws = index_workspace(SqliteChunkStore(db), root, embedder=embedder).workspace_id
    searcher = HybridSearcher(SqliteChunkStore(db), embedder)
    bm25 = [h.path for h in searcher.search(ws, "zebra", k=10, fusion=FusionMethod.BM25)]
    auto = searcher.search(ws, "zebra", k=10)
    assert [h.path for h in auto[: len(bm25)]] == bm25
    # "other.txt" shares no word: its hashing cosine is collision noise, not evidence.
    assert len(auto) == 5 and "other.txt" not in {h.path for h in auto}
    assert all(a.score >= b.score for a, b in itertools.pairwise(auto))


def test_lexical_first_breaks_exact_bm25_ties_by_vector(db: Database, tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.txt": "alpha west", "b.txt": "alpha north"})
    ws = index_workspace(SqliteChunkStore(db), root, embedder=CompassEmbedder()).workspace_id
    store = SqliteChunkStore(db)
    for word, first in (("north", "b.txt"), ("west", "a.txt")):
        searcher = HybridSearcher(store, _Fixed(CompassEmbedder(), word))
        hits = searcher.search(ws, "alpha", k=2, fusion=FusionMethod.LEXICAL_FIRST)
        assert hits[0].bm25 == hits[1].bm25
        assert hits[0].path == first


class _Fixed:
    """Embeds documents normally but every one-text call (the query) as ``word``."""

    def __init__(self, inner: CompassEmbedder, word: str) -> None:
        self.inner = inner
        self.word = word
        self.model_id = inner.model_id
        self.dimensions = inner.dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return self.inner.embed([self.word] if len(texts) == 1 else texts)


def test_minmax_and_rrf_use_both_sides(db: Database, tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path / "ws",
        {
            "keyword.txt": "quasar quasar quasar report",
            "semantic.txt": "north north facing window",
            "both.txt": "quasar seen from the north",
        },
    )
    embedder = CompassEmbedder()
    ws = index_workspace(SqliteChunkStore(db), root, embedder=embedder).workspace_id
    searcher = HybridSearcher(SqliteChunkStore(db), embedder)
    assert [h.path for h in searcher.search(ws, "quasar", k=3, fusion=FusionMethod.BM25)] == [
        "keyword.txt",
        "both.txt",
    ]
    for fusion in (FusionMethod.MINMAX, FusionMethod.RRF, FusionMethod.AUTO):
        hits = searcher.search(ws, "quasar north", k=3, fusion=fusion)
        assert hits[0].path == "both.txt", fusion
        assert {h.path for h in hits} == {"keyword.txt", "semantic.txt", "both.txt"}
    vector_only = searcher.search(ws, "north", k=3, fusion=FusionMethod.VECTOR)
    assert vector_only[0].path in {"semantic.txt", "both.txt"}
    assert all(h.bm25 is None and h.cosine is not None for h in vector_only)


def test_vector_matrix_is_cached_and_caught_up_after_reindex(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path / "ws", {"a.txt": "north road", "b.txt": "east gate"})
    embedder = CompassEmbedder()
    store = SqliteChunkStore(db)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    searcher = HybridSearcher(store, embedder)
    loads: list[str] = []
    real = store.load_vectors
    monkeypatch.setattr(store, "load_vectors", lambda w, m: loads.append(w) or real(w, m))
    searcher.search(ws, "north", k=1, fusion=FusionMethod.VECTOR)
    searcher.search(ws, "east", k=1, fusion=FusionMethod.VECTOR)
    assert loads == [ws]
    make_workspace(root, {"c.txt": "south pier"})
    index_workspace(store, root, embedder=embedder)
    hits = searcher.search(ws, "south", k=1, fusion=FusionMethod.VECTOR)
    assert loads == [ws] and hits[0].path == "c.txt"  # only c.txt's vector was read


def test_terms_in_more_than_five_percent_of_chunks_only_rescore(
    db: Database, tmp_path: Path
) -> None:
    files = {f"d{i:02d}.txt": f"common filler text {i}" for i in range(40)}
    files["rare.txt"] = "common rare zebra"
    files["rarer.txt"] = "other rare zebra"  # as long, without "common"
    root = make_workspace(tmp_path / "ws", files)
    embedder = HashingEmbedder(64)
    ws = index_workspace(SqliteChunkStore(db), root, embedder=embedder).workspace_id
    store = SqliteChunkStore(db)
    dropping = HybridSearcher(store, embedder, SearchOptions(drop_min_chunks=0))
    assert dropping.gathering_terms(ws, "Common zebras") == ["zebras"]  # stems: common, zebra
    # every word common: all of them gather (commonness never decides what is found)
    assert dropping.gathering_terms(ws, "common filler") == ["common", "filler"]
    assert dropping.keyword_terms(ws, "Common zebras") == ["common", "zebras"]
    keeping = HybridSearcher(store, embedder)  # index far below drop_min_chunks
    assert keeping.gathering_terms(ws, "common zebras") == ["common", "zebras"]
    # "common" gathers nothing but still ranks the zebra chunk holding it first
    hits = dropping.search(ws, "common zebra", k=3, fusion=FusionMethod.BM25)
    assert [h.path for h in hits] == ["rare.txt", "rarer.txt"]
    rescored, ranked = (
        dropping.keyword(ws, "common zebra", 2),
        keeping.keyword(ws, "common zebra", 2),
    )
    assert [i for i, _ in rescored] == [i for i, _ in ranked]
    assert [s for _, s in rescored] == pytest.approx([s for _, s in ranked])


def test_a_query_of_only_common_words_still_finds_and_ranks_by_them(
    db: Database, tmp_path: Path
) -> None:
    """Every query word is in more than 5% of the chunks (as "attention mask" in a model
    library): the hits are ranked by both words and score above the default floor."""
    files = {f"attn{i:02d}.py": f"attention scores {i} softmax" for i in range(10)}
    files |= {f"masks{i:02d}.py": f"mask padding {i} tokens" for i in range(10)}
    files |= {f"other{i:02d}.py": f"unrelated helper {i}" for i in range(20)}
    files["masking.py"] = "def apply(attention, mask):\n    return attention * mask"
    root = make_workspace(tmp_path / "ws", files)
    embedder = HashingEmbedder(64)
    store = SqliteChunkStore(db)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    searcher = HybridSearcher(store, embedder, SearchOptions(drop_min_chunks=0))
    assert searcher.gathering_terms(ws, "attention mask") == ["attention", "mask"]
    hits = searcher.search(ws, "attention mask", k=3)
    assert hits[0].path == "masking.py"
    assert hits[0].score >= DEFAULT_FLOOR
    searcher.close()


def test_hits_convert_to_retrieval_hits(indexed: tuple[HybridSearcher, str]) -> None:
    searcher, ws = indexed
    hit = searcher.search(ws, "antenna", k=1)[0]
    converted = hit.to_retrieval_hit("workspace:/tmp/ws")
    assert converted.source == "workspace:/tmp/ws"
    assert converted.chunk_id == "near.txt:1-1"
    assert (converted.path, converted.start_line, converted.end_line) == ("near.txt", 1, 1)
    assert converted.text == CORPUS["near.txt"] and converted.score == hit.score
    assert hit.snippet(20) == "the near field of a…"


def test_dropped_terms_follow_the_index_as_it_changes(db: Database, tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {f"d{i:02d}.txt": f"filler {i}" for i in range(40)})
    embedder = HashingEmbedder(64)
    store = SqliteChunkStore(db)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    searcher = HybridSearcher(store, embedder, SearchOptions(drop_min_chunks=0))
    assert searcher.gathering_terms(ws, "zebra filler") == ["zebra"]  # zebra 0, filler 40
    make_workspace(root, {f"z{i:02d}.txt": f"zebra herd {i}" for i in range(60)})
    index_workspace(store, root, embedder=embedder)
    # Both words are now common: both gather.
    assert searcher.gathering_terms(ws, "zebra filler") == ["zebra", "filler"]
    for path in root.glob("z*.txt"):
        path.unlink()
    index_workspace(store, root, embedder=embedder)
    assert searcher.gathering_terms(ws, "zebra filler") == ["zebra"]
    searcher.close()


def test_stopwords_leave_the_keyword_side_unless_nothing_else_is_left(
    indexed: tuple[HybridSearcher, str],
) -> None:
    searcher, ws = indexed
    assert searcher.keyword_terms(ws, "what is the runner doing") == ["runner"]
    assert searcher.keyword_terms(ws, "the of") == ["the", "of"]
