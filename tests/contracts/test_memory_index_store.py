"""Contract suite for ``MemoryIndexStore`` (memory search), run over SQLite and Postgres: the same
units, scopes (a workspace sees its memories and the user's), statistics, vectors and ranking on
both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kairox.retrieval.embeddings import create_embedder
from kairox.retrieval.search import HybridRanker
from kairox.services import Services
from kairox.store.memory_index import USER_WORKSPACE
from kairox.store.protocols import MemoryIndexStore
from kairox.store.records import MemoryUnit
from kairox.store.words import words
from kairox.testing.clock import FakeClock


@pytest.fixture
def services(tmp_path: Path, store_url: str | None) -> Iterator[Services]:
    opened = Services.open(tmp_path / "home", clock=FakeClock(), store_url=store_url)
    yield opened
    opened.close()


UNITS = (
    MemoryUnit("mem_1", "ws_a", "db.engine", "This project uses PostgreSQL 17"),
    MemoryUnit("mem_2", "ws_a", "cache", "Redis is the cache layer"),
    MemoryUnit("mem_3", "ws_b", "cache", "Memcached caches the pages"),
    MemoryUnit("mem_4", USER_WORKSPACE, "user.name", "The user's name is Dana"),
)


def _ids(store: MemoryIndexStore) -> dict[str, int]:
    found = store.get_units(list(range(1, 100)))
    return {unit.memory_id: unit_id for unit_id, unit in found.items()}


def test_units_scopes_and_statistics(services: Services) -> None:
    store: MemoryIndexStore = services.memory_index
    assert store.last_seq() == 0
    assert store.apply(UNITS, [], last_seq=7) == 4
    assert store.apply(UNITS[:1], [], last_seq=3) == 0  # unchanged; the watermark stays
    assert store.last_seq() == 7
    # A workspace sees its own memories and the user's, never another workspace's.
    ids = _ids(store)
    assert store.keyword_weights == (0.6, 1.0)
    assert sorted(i for i, _ in store.keyword_keys("ws_a")) == sorted(
        [ids["mem_1"], ids["mem_2"], ids["mem_4"]]
    )
    assert sorted(i for i, _ in store.keyword_keys("ws_b")) == sorted([ids["mem_3"], ids["mem_4"]])
    assert store.keyword_documents("ws_b", [ids["mem_1"], ids["mem_3"]]) == [
        (ids["mem_3"], ("cache", "Memcached caches the pages"))
    ]
    ranker = HybridRanker(store, create_embedder("hashing"))
    hits = ranker.keyword("ws_a", "cache", 5)
    assert [h[0] for h in hits] == [ids["mem_2"]] and hits[0][1] > 0
    assert [h[0] for h in ranker.keyword("ws_b", "redis cache", 5)] == [ids["mem_3"]]
    assert ranker.keyword("ws_a", "nothing", 5) == []


def test_edits_deletes_and_vectors(services: Services) -> None:
    store: MemoryIndexStore = services.memory_index
    store.apply(UNITS, [], last_seq=1)
    ids = _ids(store)
    missing = store.units_missing_vectors("m", limit=10)
    assert [i for i, _ in missing] == sorted(ids.values())
    store.put_vectors("m", [i for i, _ in missing], np.eye(4, dtype=np.float32))
    assert store.units_missing_vectors("m", limit=10) == []
    got, matrix = store.load_vectors("ws_a", "m")
    assert sorted(got.tolist()) == sorted([ids["mem_1"], ids["mem_2"], ids["mem_4"]])
    assert matrix.shape == (3, 4)
    before = store.generation("ws_a")
    # An edit drops the unit's vectors and moves the generation; a delete removes the unit.
    edited = MemoryUnit("mem_2", "ws_a", "cache", "Memcached is the cache layer")
    assert store.apply([edited], ["mem_1"], last_seq=2) == 2
    assert store.generation("ws_a") > before
    assert [i for i, _ in store.units_missing_vectors("m", limit=10)] == [ids["mem_2"]]
    assert store.get_units([ids["mem_1"], ids["mem_2"]]) == {ids["mem_2"]: edited}
    # The edit changes the unit's keyword version, so the keyword index re-reads it.
    ranker = HybridRanker(store, create_embedder("hashing"))
    assert ranker.keyword("ws_a", "redis", 5) == []
    assert [h[0] for h in ranker.keyword("ws_a", "memcached", 5)] == [ids["mem_2"]]


_CJK = st.sampled_from("数据库我们项目使用的猫叫小橘データベースはです우리데이터")
_LATIN = st.sampled_from("abcdeistuvxyzİéß0123 .,-")
_TEXT = st.lists(st.one_of(_CJK, _LATIN), min_size=1, max_size=30).map("".join)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_TEXT)
def test_a_text_gives_the_same_terms_when_stored_and_when_searched(
    services: Services, text: str
) -> None:
    """Index time and query time split alike on both stores (CJK as bigrams): the stored length
    is the text's terms, and the text finds itself."""
    store: MemoryIndexStore = services.memory_index
    unit = MemoryUnit("mem_p", "ws_p", "", text)
    store.apply([unit, MemoryUnit("mem_q", "ws_p", "", "unrelated words only")], [], last_seq=1)
    try:
        row = services.db.query_one("SELECT id, length FROM memory_units WHERE memory_id = 'mem_p'")
        assert int(row["length"]) == len(words(text))
        split = words(text)
        if not split:
            return
        hits = HybridRanker(store, create_embedder("hashing")).keyword("ws_p", text, 5)
        assert hits and hits[0][0] == int(row["id"])
    finally:
        store.apply([], ["mem_p", "mem_q"], last_seq=1)


def test_embedded_marker_own_units_and_vectors_by_id(services: Services) -> None:
    """The store records the generation at which no unit lacked a model's vector, says whether
    a workspace holds memories of its own, and reads the vectors of given units only."""
    store: MemoryIndexStore = services.memory_index
    assert store.embedded_at("m") is None
    store.mark_embedded("m", 5)
    store.mark_embedded("m", 7)
    assert store.embedded_at("m") == 7 and store.embedded_at("other") is None
    store.apply(UNITS, [], last_seq=1)
    ids = _ids(store)
    assert store.has_own_units("ws_a") and store.has_own_units("ws_b")
    assert not store.has_own_units("ws_new") and not store.has_own_units(USER_WORKSPACE)
    store.put_vectors("m", sorted(ids.values()), np.eye(4, dtype=np.float32))
    found = store.load_vectors_of("ws_a", "m", [ids["mem_4"], ids["mem_2"]])
    assert found is not None
    got, vectors = found
    assert got.tolist() == sorted([ids["mem_2"], ids["mem_4"]]) and vectors.shape == (2, 4)
    assert store.load_vectors_of("ws_a", "other", [ids["mem_2"]]) is not None
    assert len(store.load_vectors_of("ws_a", "other", [ids["mem_2"]])[0]) == 0  # type: ignore[index]


WORDS = ("river", "stone", "cloud", "ember", "maple", "quartz")


def _corpus(store: MemoryIndexStore, n: int) -> dict[int, MemoryUnit]:
    embedder = create_embedder("hashing")
    units = [
        MemoryUnit(f"mem_{i}", USER_WORKSPACE, f"fact.{i}",
                   f"fact {i} about {WORDS[i % 6]} and {WORDS[i * 5 % 6]}")
        for i in range(n)
    ]  # fmt: skip
    units.append(MemoryUnit("mem_rare", USER_WORKSPACE, "rare", "a zebra crossed the river"))
    store.apply(units, [], last_seq=1)
    found = store.get_units(list(range(1, n + 10)))
    ids = sorted(found)
    store.put_vectors(embedder.model_id, ids, embedder.embed([found[i].text for i in ids]))
    return found


def test_the_lexical_memory_ranking_reads_only_its_candidates_vectors(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``hashing`` the memory ranker orders the keyword hits as the full scan does (BM25,
    ties by cosine) without loading the scope's matrix; units holding a common word the rarer
    words did not gather still follow them, as the vector side's fill-ins did."""
    from kairox.retrieval.fusion import SearchOptions
    from kairox.retrieval.memory_index import MemoryRanker

    store: MemoryIndexStore = services.memory_index
    units = _corpus(store, 120)
    hashing = create_embedder("hashing")
    full = HybridRanker(store, hashing).rank(USER_WORKSPACE, "river stone", k=50)

    def no_matrix(*args: object) -> None:
        raise AssertionError("the whole matrix was loaded")

    monkeypatch.setattr(type(store), "load_vectors", no_matrix)
    lean = MemoryRanker(store, hashing).rank(USER_WORKSPACE, "river stone", k=50)
    keyword = [r for r in full if r[2] is not None]
    assert lean[: len(keyword)] == keyword and len(keyword) >= 20
    # Words in more than 5% of a large scope only rescore what rarer words gather: "river"
    # here. Its units still come after the zebra's, as the vector side's fill-ins did.
    options = SearchOptions(drop_min_chunks=10)
    ranked = MemoryRanker(store, hashing, options).rank(USER_WORKSPACE, "zebra river", k=30)
    texts = [units[r[0]].body for r in ranked]
    assert texts[0] == "a zebra crossed the river"
    assert len(texts) == 21 and all("river" in t for t in texts[1:])  # all 20 of them
