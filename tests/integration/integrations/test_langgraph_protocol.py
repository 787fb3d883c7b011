"""``KairoxStore`` keeps LangGraph's store contract (issue 35), on both stores: any namespace,
operator filters, ``index`` per put and per store, every item ranked by a query, reads that
start no session, and the limits on keys and values."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import ListNamespacesOp, MatchCondition

from kairox import AppFacade, InvalidInput, MemoryScope
from kairox.integrations.langgraph import KairoxStore


class LetterEmbeddings(Embeddings):
    """A 26-dimension letter count: texts sharing letters are close, others are not."""

    def _one(self, text: str) -> list[float]:
        counts = [float(text.lower().count(chr(97 + i))) for i in range(26)]
        norm = math.sqrt(sum(c * c for c in counts)) or 1.0
        return [c / norm for c in counts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def memories(workspace: Path) -> list[tuple[MemoryScope, str | None, str]]:
    facade = AppFacade.open()
    try:
        records = asyncio.run(facade.memory.list(workspace=workspace))
    finally:
        facade.close()
    return sorted((r.scope, r.key, r.body) for r in records)


def test_any_namespace_is_a_path_inside_the_configured_scope(
    store: KairoxStore, backend: str | None, workspace: Path
) -> None:
    store.put(("memories", "u1"), "diet", {"content": "vegetarian"})
    store.put(("memories", "u2"), "diet", {"content": "vegan"})
    store.put(("user",), "diet", {"content": "no preference"})
    one, two = store.get(("memories", "u1"), "diet"), store.get(("memories", "u2"), "diet")
    assert one is not None and one.value == {"content": "vegetarian"}
    assert one.namespace == ("memories", "u1")
    assert two is not None and two.value == {"content": "vegan"}
    assert store.get(("user",), "diet").value == {"content": "no preference"}  # type: ignore[union-attr]
    scopes = {scope for scope, _key, _body in memories(workspace)}
    assert scopes == {MemoryScope.USER}
    assert store.list_namespaces() == [("memories", "u1"), ("memories", "u2"), ("user",)]
    in_workspace = KairoxStore(workspace=workspace, scope="workspace")
    try:
        in_workspace.put(("team", "notes"), "ci", {"content": "GitHub Actions"})
    finally:
        in_workspace.close()
    assert (MemoryScope.WORKSPACE, "GitHub Actions") in {
        (scope, body) for scope, _key, body in memories(workspace)
    }


def test_list_namespaces_prefix_suffix_and_depth(store: KairoxStore) -> None:
    for namespace in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b", "c")]:
        store.put(namespace, "k", {"n": 1})
    assert store.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "x")]
    assert store.list_namespaces(suffix=("b", "c")) == [("a", "b", "c"), ("z", "b", "c")]
    assert store.list_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "x")]
    assert store.list_namespaces(prefix=("*", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("z", "b", "c"),
    ]
    empty = ListNamespacesOp(match_conditions=(MatchCondition("suffix", ()),), limit=10)
    assert len(store.batch([empty])[0]) == 4  # an empty condition matches everything


def test_filters_with_operators(store: KairoxStore) -> None:
    for key, price in [("a", 10), ("b", 15), ("c", 20)]:
        store.put(("shop",), key, {"price": price, "meta": {"tag": key}})

    def keys(condition: dict[str, object]) -> list[str]:
        return sorted(i.key for i in store.search(("shop",), filter=condition))

    assert keys({"price": {"$gt": 15}}) == ["c"]
    assert keys({"price": {"$gte": 15}}) == ["b", "c"]
    assert keys({"price": {"$lt": 15}}) == ["a"]
    assert keys({"price": {"$lte": 15}}) == ["a", "b"]
    assert keys({"price": {"$ne": 15}}) == ["a", "c"]
    assert keys({"price": {"$eq": 10}}) == ["a"]
    assert keys({"price": {"$gt": 9, "$lt": 20}}) == ["a", "b"]
    assert keys({"meta.tag": "b"}) == ["b"]


def test_a_query_ranks_every_item_with_no_floor(store: KairoxStore) -> None:
    store.put(("docs",), "db", {"content": "The project database is PostgreSQL"})
    store.put(("docs",), "fish", {"content": "Salmon swim upstream in autumn"})
    hits = store.search(("docs",), query="PostgreSQL database")
    assert [h.key for h in hits] == ["db", "fish"]  # the unrelated one is ranked, not dropped
    assert all(h.score is not None and 0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].score > hits[1].score  # type: ignore[operator]


def test_index_config_and_index_per_put(backend: str | None, workspace: Path) -> None:
    kx = KairoxStore(workspace=workspace, index={"dims": 26, "embed": LetterEmbeddings()})
    try:
        kx.put(("docs",), "zebra", {"text": "zzz zebra"})
        kx.put(("docs",), "hidden", {"text": "zzz zebra"}, index=False)
        kx.put(("docs",), "titled", {"title": "zzz", "body": "aaa"}, index=["body"])
        hits = kx.search(("docs",), query="zzz")
        assert hits[0].key == "zebra"
        assert hits[-1].key == "hidden" and hits[-1].score is None  # never embedded
        titled = next(h for h in hits if h.key == "titled")
        assert titled.score is not None and titled.score < 0.5  # only "body" is indexed
        assert kx.get(("docs",), "hidden").value == {"text": "zzz zebra"}  # type: ignore[union-attr]
    finally:
        kx.close()


def test_reading_a_session_namespace_starts_no_session(store: KairoxStore, workspace: Path) -> None:
    assert store.get(("session", "ghost"), "k") is None
    assert store.search(("session", "ghost")) == []
    facade = AppFacade.open()
    try:
        names = [s.name for s in asyncio.run(facade.sessions.list(workspace=workspace))]
    finally:
        facade.close()
    assert "ghost" not in names


def test_empty_keys_and_values_and_the_key_limit(store: KairoxStore) -> None:
    store.put(("user",), "", {"content": "under an empty key"})
    store.put(("notes",), "empty", {})
    store.put(("notes",), "blank", {"content": ""})
    assert store.get(("user",), "").value == {"content": "under an empty key"}  # type: ignore[union-attr]
    assert store.get(("notes",), "empty").value == {}  # type: ignore[union-attr]
    assert store.get(("notes",), "blank").value == {"content": ""}  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="limit is 200"):
        store.put(("notes",), "k" * 300, {"n": 1})
