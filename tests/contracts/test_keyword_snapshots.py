"""Contract suite for the saved keyword indexes (``kairox.store.keyword_snapshots``), over
SQLite and Postgres: a fresh ranker loads a scope's saved index instead of rebuilding it, and what
it loads ranks exactly as an index rebuilt from the store's texts, before and after the scope
changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kairox.retrieval import keyword_side
from kairox.retrieval.bm25 import KeywordIndex
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.search import HybridSearcher
from kairox.services import Services
from kairox.store.keyword_snapshots import KeywordSnapshots
from kairox.testing.clock import FakeClock

WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta"),
    *("eta", "theta", "iota", "kappa", "lambda", "mu"),
]
QUERIES = ("alpha beta", "gamma", "kappa mu zeta", "epsilon_theta", "missing words")


@pytest.fixture
def services(tmp_path: Path, store_url: str | None) -> Iterator[Services]:
    opened = Services.open(tmp_path / "home", clock=FakeClock(), store_url=store_url)
    yield opened
    opened.close()


def _write(root: Path, files: int, *, offset: int = 0) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(offset, offset + files):
        text = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(3 + i % 5))
        (root / f"f{i:03d}.txt").write_text(f"{text} item{i}\n", encoding="utf-8")


def _rebuilt(searcher: HybridSearcher, ws: str, query: str) -> list[tuple[int, float]]:
    index = KeywordIndex(searcher.store.keyword_weights)
    index.add(searcher.chunks.keyword_documents(ws))
    return index.search(searcher._stemmer.stems(searcher.keyword_terms(ws, query)), 10)


def _same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> None:
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b])


def test_a_saved_keyword_index_loads_and_ranks_as_a_rebuilt_one(
    services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_side, "SAVE_CHANGES", 10)
    store = services.chunks
    assert isinstance(store, KeywordSnapshots)
    root = tmp_path / "ws"
    _write(root, 60)
    embedder = HashingEmbedder(64)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    first = HybridSearcher(store, embedder)
    before = [first.keyword(ws, q, 10) for q in QUERIES]  # built from the texts, then saved
    saved = store.load_keyword_snapshot(ws)
    assert saved is not None and saved.generation == store.generation(ws)

    # A fresh ranker never reads the texts: it loads the saved index.
    reads: list[str] = []
    real = store.keyword_documents
    monkeypatch.setattr(
        store, "keyword_documents", lambda *a, **k: reads.append("docs") or real(*a, **k)
    )
    fresh = HybridSearcher(store, embedder)
    loaded = [fresh.keyword(ws, q, 10) for q in QUERIES]
    assert reads == []
    for query, got, expected in zip(QUERIES, loaded, before, strict=True):
        _same(got, expected)
        _same(got, _rebuilt(fresh, ws, query))

    # The scope changes: a new ranker loads the older save and reads only what changed.
    _write(root, 5, offset=100)
    (root / "f000.txt").unlink()
    index_workspace(store, root, embedder=embedder)
    reads.clear()
    caught_up = HybridSearcher(store, embedder)
    changed = [caught_up.keyword(ws, q, 10) for q in QUERIES]
    assert reads == ["docs"]  # the five new files' chunks, read once
    for query, got in zip(QUERIES, changed, strict=True):
        _same(got, _rebuilt(caught_up, ws, query))
    first.close()
    fresh.close()
    caught_up.close()


_OTHER_PROCESS = """
import json, sys
from pathlib import Path
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.search import HybridSearcher
from kairox.services import Services

home, url, ws, queries = sys.argv[1], sys.argv[2] or None, sys.argv[3], json.loads(sys.argv[4])
services = Services.open(Path(home), store_url=url)
store = services.chunks
reads = []
real = store.keyword_documents
store.keyword_documents = lambda *a, **k: reads.append(1) or real(*a, **k)
searcher = HybridSearcher(store, HashingEmbedder(64))
ranked = [searcher.keyword(ws, q, 10) for q in queries]
print(json.dumps({"texts_read": len(reads), "ranked": ranked}))
services.close()
"""


def test_a_snapshot_saved_in_one_process_ranks_identically_in_another(
    services: Services, tmp_path: Path, store_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_side, "SAVE_CHANGES", 10)
    store = services.chunks
    root = tmp_path / "ws"
    _write(root, 60)
    embedder = HashingEmbedder(64)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    here = HybridSearcher(store, embedder)
    ranked = [here.keyword(ws, q, 10) for q in QUERIES]  # built from the texts, then saved
    assert store.load_keyword_snapshot(ws) is not None
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    args = [str(tmp_path / "home"), store_url or "", ws, json.dumps(QUERIES)]
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, *args],
        check=True,
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )
    there = json.loads(done.stdout.strip().splitlines()[-1])
    assert there["texts_read"] == 0  # loaded, not rebuilt
    assert there["ranked"] == [[[i, s] for i, s in hits] for hits in ranked]  # bit-identical
    here.close()


def test_a_keyword_index_is_built_a_batch_of_texts_at_a_time(
    services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope's texts are never all held as words at once (1.6 GB at 68k chunks): the build
    reads them ``BUILD_BATCH`` at a time and ranks as one built in one go."""
    monkeypatch.setattr(keyword_side, "BUILD_BATCH", 7)
    store = services.chunks
    root = tmp_path / "ws"
    _write(root, 40)
    embedder = HashingEmbedder(64)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    batches: list[int] = []
    real = store.keyword_documents
    monkeypatch.setattr(
        store,
        "keyword_documents",
        lambda scope, ids=None, **k: batches.append(len(ids or ())) or real(scope, ids, **k),
    )
    searcher = HybridSearcher(store, embedder)
    ranked = [searcher.keyword(ws, q, 10) for q in QUERIES]
    assert len(batches) == -(-store.chunk_count(ws) // 7) and max(batches) == 7
    for query, got in zip(QUERIES, ranked, strict=True):
        _same(got, _rebuilt(searcher, ws, query))
    searcher.close()


def test_a_snapshot_of_another_format_or_broken_is_rebuilt(
    services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = services.chunks
    assert isinstance(store, KeywordSnapshots)
    root = tmp_path / "ws"
    _write(root, 20)
    embedder = HashingEmbedder(64)
    ws = index_workspace(store, root, embedder=embedder).workspace_id
    store.save_keyword_snapshot(ws, store.generation(ws), b"not a snapshot")
    searcher = HybridSearcher(store, embedder)
    _same(searcher.keyword(ws, "alpha", 10), _rebuilt(searcher, ws, "alpha"))
    assert searcher.keyword(ws, "alpha", 10)
    searcher.close()


def test_keyword_state_round_trips() -> None:
    index = KeywordIndex((0.5, 1.0))
    index.add([(i, (f"p{i}", " ".join(WORDS[: 1 + i % 7]))) for i in range(1, 40)])
    index.remove([3, 4, 5])
    restored = KeywordIndex.from_state(index.state())
    for query in QUERIES:
        stems = index.stems(query.split())
        _same(restored.search(stems, 10), index.search(stems, 10))
    np.testing.assert_array_equal(restored.state().slots, index.state().slots)
    restored.add([(99, ("p99", "alpha alpha"))])
    assert restored.search(index.stems(["alpha"]), 1)[0][0] == 99


def test_a_workspace_without_a_saved_memory_index_starts_from_the_users(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every workspace sees the user's memories: a workspace's first search loads the user's
    saved keyword index and reads only its own memories, then saves its own."""
    from kairox.retrieval.search import HybridRanker
    from kairox.store.memory_index import USER_WORKSPACE
    from kairox.store.records import MemoryUnit

    monkeypatch.setattr(keyword_side, "SAVE_CHANGES", 1)
    store = services.memory_index
    assert isinstance(store, KeywordSnapshots)
    users = [
        MemoryUnit(f"u{i}", USER_WORKSPACE, f"k{i}", f"{WORDS[i % 12]} fact {i}") for i in range(30)
    ]
    own = [MemoryUnit("w1", "ws_a", "db", "alpha engine"), MemoryUnit("w2", "ws_b", "x", "beta")]
    store.apply([*users, *own], [], last_seq=1)
    embedder = HashingEmbedder(64)
    HybridRanker(store, embedder).warm_keywords(USER_WORKSPACE)
    assert store.load_keyword_snapshot("ws_a") is not None  # the user's, as a start
    reads: list[object] = []
    real = store.keyword_documents
    monkeypatch.setattr(
        store, "keyword_documents", lambda s, ids=None, **k: reads.append(ids) or real(s, ids, **k)
    )
    ranker = HybridRanker(store, embedder)
    got = ranker.keyword("ws_a", "alpha engine", 10)
    (added,) = reads
    assert list(added) == [
        i for i, u in store.get_units(list(range(1, 40))).items() if u.memory_id == "w1"
    ]
    index = KeywordIndex(store.keyword_weights)
    index.add(real("ws_a"))
    _same(got, index.search(ranker._stemmer.stems(["alpha", "engine"]), 10))
    saved = store.load_keyword_snapshot("ws_a")
    assert saved is not None and saved.generation == store.generation("ws_a")  # its own now
