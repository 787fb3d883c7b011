"""The composite retriever: fan-out, profile filtering, absolute scores, dedupe, floor, failures."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from kairox.core.errors import InvalidInput, RetrievalError
from kairox.retrieval.composite import (
    CompositeWorkspaceRetriever,
    DuplicateHit,
    SourceBinding,
    SourceError,
    normalise,
    split_by_kind,
)
from kairox.retrieval.types import RetrievalHit


def hit(source: str, text: str, score: float, chunk: str = "") -> RetrievalHit:
    return RetrievalHit(source=source, chunk_id=chunk or f"{source}/{text}", text=text, score=score)


class Fixed:
    """A source answering with fixed hits, recording each ``k`` it was asked for."""

    def __init__(
        self, name: str, hits: Sequence[tuple[str, float]], *, hit_source: str = ""
    ) -> None:
        self._name = name
        self._hits = [hit(hit_source or name, text, score) for text, score in hits]
        self.calls: list[tuple[str, int]] = []

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        self.calls.append((query, k))
        return list(self._hits)


class Failing:
    def __init__(self, name: str, error: Exception) -> None:
        self._name = name
        self._error = error

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        raise self._error


class Hanging:
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        await asyncio.Event().wait()
        return []


class Rendezvous:
    """Answers only once every source sharing the barrier has started: proves concurrency."""

    def __init__(self, name: str, barrier: asyncio.Barrier) -> None:
        self._name = name
        self._barrier = barrier

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, *, k: int) -> list[RetrievalHit]:
        await self._barrier.wait()
        return [hit(self._name, f"from {self._name}", 1.0)]


def composite(
    *bindings: SourceBinding, max_results: int = 10, min_score: float = 0.0, timeout_s: float = 5.0
) -> CompositeWorkspaceRetriever:
    return CompositeWorkspaceRetriever(
        bindings, max_results=max_results, min_score=min_score, timeout_s=timeout_s
    )


async def test_sources_are_searched_concurrently() -> None:
    barrier = asyncio.Barrier(3)
    sources = [SourceBinding(Rendezvous(f"kb:{i}", barrier)) for i in range(3)]

    result = await composite(*sources, timeout_s=2.0).search("q", profile="p")

    assert result.errors == ()
    assert sorted(h.source for h in result.hits) == ["kb:0", "kb:1", "kb:2"]


async def test_each_source_gets_its_quota() -> None:
    a = Fixed("kb:a", [("one", 1.0)])
    b = Fixed("kb:b", [("two", 1.0)])

    await composite(SourceBinding(a, k=3), SourceBinding(b, k=7)).search("query", profile="p")

    assert a.calls == [("query", 3)] and b.calls == [("query", 7)]


async def test_a_source_returning_more_than_its_quota_is_truncated() -> None:
    greedy = Fixed("kb:g", [(f"t{i}", float(10 - i)) for i in range(6)])

    result = await composite(SourceBinding(greedy, k=2)).search("q", profile="p")

    assert [h.text for h in result.hits] == ["t0", "t1"]


async def test_profile_aliases_decide_who_sees_a_source() -> None:
    shared = Fixed("kb:shared", [("everyone", 1.0)])
    private = Fixed("kb:private", [("smart only", 1.0)])
    bindings = (SourceBinding(shared), SourceBinding(private, profile_aliases=("smart",)))

    fast = await composite(*bindings).search("q", profile="fast")
    smart = await composite(*bindings).search("q", profile="smart")

    assert [h.text for h in fast.hits] == ["everyone"]
    assert fast.searched == ("kb:shared",)
    assert private.calls == [("q", 5)]
    assert {h.text for h in smart.hits} == {"everyone", "smart only"}
    assert smart.searched == ("kb:shared", "kb:private")


def test_scores_are_absolute_a_lone_weak_hit_stays_weak() -> None:
    """Per-query min-max made any lone hit 1.0; a score now only depends on the hit."""
    assert [h.score for h in normalise([hit("s", "a", 0.05)])] == [0.05]
    assert [h.score for h in normalise([hit("s", "a", 0.3), hit("s", "b", 0.3)])] == [0.3, 0.3]


@pytest.mark.parametrize(("raw", "clipped"), [(3.3, 1.0), (-4.0, 0.0), (float("nan"), 0.0)])
def test_scores_outside_the_shared_scale_are_clipped(raw: float, clipped: float) -> None:
    assert [h.score for h in normalise([hit("s", "a", raw)])] == [clipped]


async def test_hits_from_two_sources_merge_by_their_absolute_scores() -> None:
    workspace = Fixed("workspace:/r", [("w-weak", 0.1), ("w-mid", 0.5)])
    kb = Fixed("kb:docs", [("k-best", 0.9), ("k-low", 0.3)])

    result = await composite(SourceBinding(workspace), SourceBinding(kb)).search("q", profile="p")

    assert [(h.text, h.score) for h in result.hits] == [
        ("k-best", 0.9),
        ("w-mid", 0.5),
        ("k-low", 0.3),
        ("w-weak", 0.1),
    ]


async def test_the_same_text_is_kept_once_with_the_higher_score() -> None:
    ws = Fixed(
        "workspace",
        [("def f():\n    return 1", 0.9), ("other", 0.1)],
        hit_source="workspace:/repo/a.py",
    )
    kb = Fixed("kb:docs", [("x", 0.5), ("def  f():   return 1", 0.4), ("y", 0.1)])

    result = await composite(SourceBinding(ws), SourceBinding(kb)).search("q", profile="p")

    texts = [h.text for h in result.hits]
    assert texts.count("def f():\n    return 1") == 1
    assert "def  f():   return 1" not in texts
    kept = next(h for h in result.hits if h.text.startswith("def"))
    assert kept.source == "workspace:/repo/a.py" and kept.score == 0.9
    assert result.duplicates == (DuplicateHit(kept="workspace:/repo/a.py", dropped="kb:docs"),)


async def test_min_score_is_a_floor_then_max_results() -> None:
    source = Fixed("kb:s", [("a", 1.0), ("b", 0.8), ("c", 0.5), ("d", 0.1), ("e", 0.0)])

    result = await composite(SourceBinding(source, k=10), min_score=0.4, max_results=2).search(
        "q", profile="p"
    )

    assert [(h.text, h.score) for h in result.hits] == [("a", 1.0), ("b", 0.8)]
    assert result.floor == 0.4
    under = await composite(SourceBinding(source, k=10), min_score=0.4).search("q", profile="p")
    assert [h.text for h in under.hits] == ["a", "b", "c"]
    assert [h.text for h in under.below_floor] == ["d"]  # no evidence at all is not even that


async def test_a_failing_source_does_not_fail_the_search() -> None:
    good = Fixed("kb:good", [("fine", 2.0)])
    bad = Failing("kb:bad", RetrievalError("kb:bad", "authentication failed: check $KEY"))
    broken = Failing("kb:broken", ValueError("boom"))

    result = await composite(SourceBinding(bad), SourceBinding(good), SourceBinding(broken)).search(
        "q", profile="p"
    )

    assert [h.text for h in result.hits] == ["fine"]
    assert result.errors == (
        SourceError("kb:bad", "retrieval error (kb:bad): authentication failed: check $KEY"),
        SourceError("kb:broken", "ValueError: boom"),
    )


async def test_a_slow_source_times_out_alone() -> None:
    good = Fixed("kb:good", [("fine", 2.0)])
    slow = Hanging("kb:slow")

    result = await composite(
        SourceBinding(good), SourceBinding(slow, timeout_s=0.05), timeout_s=5.0
    ).search("q", profile="p")

    assert [h.text for h in result.hits] == ["fine"]
    assert result.errors == (SourceError("kb:slow", "timed out after 0.05 s"),)


async def test_an_empty_query_searches_nothing() -> None:
    source = Fixed("kb:s", [("a", 1.0)])

    result = await composite(SourceBinding(source)).search("   ", profile="p")

    assert result.hits == () and source.calls == []


async def test_hits_keep_their_source_names() -> None:
    ws = Fixed("workspace", [("code", 1.0)], hit_source="workspace:/repo/src/x.py")
    kb = Fixed("kb:notes", [("note", 1.0)])

    result = await composite(SourceBinding(ws), SourceBinding(kb)).search("q", profile="p")

    assert {h.source for h in result.hits} == {"workspace:/repo/src/x.py", "kb:notes"}
    workspace, knowledge = split_by_kind(result.hits)
    assert [h.text for h in workspace] == ["code"]
    assert [h.text for h in knowledge] == ["note"]


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(InvalidInput, match="share a name"):
        composite(SourceBinding(Fixed("kb:a", [])), SourceBinding(Fixed("kb:a", [])))
    with pytest.raises(InvalidInput, match="min_score"):
        composite(SourceBinding(Fixed("kb:a", [])), min_score=3.0)
