"""What a recall search pays besides ranking: only the candidates that can reach the first k are
ordered (the same first k as ordering them all), and the units it returns are kept, bounded."""

from __future__ import annotations

import random

import numpy as np

from kairox.retrieval.fusion import (
    Evidence,
    FusionMethod,
    SearchOptions,
    boosted,
    contenders,
    fuse,
)
from kairox.retrieval.history_hits import HitRows
from kairox.retrieval.relevance import cosine_scale
from kairox.store.records import HistoryUnit


def keyword_hits(rng: random.Random, n: int) -> list[tuple[int, float]]:
    """BM25 hits best first (ties by id), with many exact ties, as the keyword index gives."""
    scores = [
        float(rng.choice([1, 2, 2, 3, 5, 8, 8, 13])) + rng.choice([0.0, 0.25]) for _ in range(n)
    ]
    ids = rng.sample(range(1, 10 * n), n)
    return sorted(zip(ids, scores, strict=True), key=lambda h: (-h[1], h[0]))


def test_ordering_only_the_contenders_gives_the_same_first_k() -> None:
    rng = random.Random(3)
    evidence = Evidence((1.0, 2.0), 1.0, cosine_scale("hashing:256"))
    options = SearchOptions()
    pruned_some = False
    for _ in range(300):
        keyword = keyword_hits(rng, rng.randint(1, 60))
        boost = {cid: rng.choice([0.0, 0.03, 0.1]) for cid, _ in keyword if rng.random() < 0.7}
        want = rng.randint(1, 30)
        kept = contenders(keyword, boost, want)
        pruned_some |= len(kept) < len(keyword)
        assert kept == keyword[: len(kept)] and len(kept) >= min(want, len(keyword))
        assert boosted(keyword, boost, want)[:want] == boosted(keyword, boost)[:want]
        ids = np.array(sorted(cid for cid, _ in keyword), dtype=np.int64)
        cosines = np.array([rng.choice([0.1, 0.5]) for _ in ids], dtype=np.float32)
        vector = [(int(i), float(c)) for i, c in zip(ids, cosines, strict=True)][:5]
        args = (FusionMethod.LEXICAL_FIRST, keyword, vector, ids, cosines, options, evidence)
        assert fuse(*args, boost, want)[:want] == fuse(*args, boost)[:want]
    assert pruned_some  # the comparison above covered lists that were cut short


def test_a_negative_boost_orders_every_candidate() -> None:
    keyword = [(1, 3.0), (2, 2.0), (3, 1.0)]
    assert contenders(keyword, {1: -0.5}, 1) == keyword
    assert boosted(keyword, {1: -2.0}, 1)[0] == (2, 2.0)


class CountingStore:
    """The two reads ``HitRows`` makes, counted."""

    def __init__(self) -> None:
        self.unit_reads: list[list[int]] = []
        self.name_reads: list[list[str]] = []

    def get_units(self, ids: list[int]) -> list[HistoryUnit]:
        self.unit_reads.append(list(ids))
        ts = "2026-01-01T00:00:00.000000Z"
        return [HistoryUnit(i, "ws", f"s{i % 2}", 1, "user", "user", ts, f"t{i}") for i in ids]

    def session_names(self, session_ids: list[str]) -> dict[str, str]:
        self.name_reads.append(list(session_ids))
        return {sid: f"name-{sid}" for sid in session_ids}


def test_returned_units_are_kept_up_to_the_limit_and_read_again_after() -> None:
    store = CountingStore()
    rows = HitRows(store, limit=3)  # type: ignore[arg-type]
    first = rows.get([1, 2, 3])
    assert [first[i].unit.content for i in (1, 2, 3)] == ["t1", "t2", "t3"]
    assert first[2].session == "name-s0" and first[2].ts.year == 2026
    assert rows.get([3, 1]).keys() == {1, 3} and store.unit_reads == [[1, 2, 3]]
    rows.get([4])  # over the limit: 2, the least recently returned, goes
    assert store.unit_reads[-1] == [4]
    rows.get([1, 3, 4])
    assert len(store.unit_reads) == 2
    assert rows.get([2])[2].unit.content == "t2" and store.unit_reads[-1] == [2]
    assert store.name_reads == [["s0", "s1"]]  # a session's name is read once
