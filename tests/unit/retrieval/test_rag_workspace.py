"""``WorkspaceRagIndex`` as a ``WorkspaceRetriever``: naming, async search off the loop, hits."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.indexer import IndexEvent, IndexFinished
from kairox.retrieval.types import RetrievalHit, WorkspaceRetriever
from kairox.retrieval.workspace import WorkspaceRagIndex
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "kairox.db")
    yield database
    database.close()


def test_name_is_the_resolved_workspace_path(db: Database, tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    index = WorkspaceRagIndex(SqliteChunkStore(db), tmp_path / "proj" / ".." / "proj")
    retriever: WorkspaceRetriever = index
    assert retriever.name == f"workspace:{(tmp_path / 'proj').resolve()}"
    assert index.embedder.model_id == "hashing:384"


async def test_index_and_search_return_labelled_hits(db: Database, workspace: Path) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "billing.py").write_text(
        "import math\n\n\ndef compute_invoice_total(items):\n    return sum(items)\n"
    )
    (workspace / "notes.md").write_text("# Notes\n\nThe invoice format is documented here.\n")
    index = WorkspaceRagIndex(SqliteChunkStore(db), workspace)
    events: list[IndexEvent] = []
    report = await index.index(progress=events.append)
    assert report.files_indexed == 2 and isinstance(events[-1], IndexFinished)
    hits = await index.search("compute invoice total", k=5)
    assert all(isinstance(h, RetrievalHit) for h in hits)
    top = hits[0]
    assert top.source == index.name
    assert top.path == "pkg/billing.py"
    assert (top.start_line, top.end_line) == (1, 5)
    assert "compute_invoice_total" in top.text
    assert {h.path for h in hits} == {"pkg/billing.py", "notes.md"}
    assert hits[0].score >= hits[1].score


async def test_search_runs_off_the_event_loop_thread(
    db: Database, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("alpha beta\n")
    index = WorkspaceRagIndex(SqliteChunkStore(db), workspace)
    await index.index()
    threads: list[int] = []
    real = index.search_sync

    def spy(query: str, *, k: int = 10, fusion: object = None) -> list[object]:
        threads.append(threading.get_ident())
        return real(query, k=k)  # type: ignore[return-value]

    monkeypatch.setattr(index, "search_sync", spy)
    hits = await index.search("alpha", k=1)
    assert [h.path for h in hits] == ["a.txt"]
    assert threads and threads[0] != threading.get_ident()


async def test_reembed_with_another_model_and_search_it(db: Database, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha beta\n")
    await WorkspaceRagIndex(SqliteChunkStore(db), workspace).index()
    other = WorkspaceRagIndex(SqliteChunkStore(db), workspace, embedder=HashingEmbedder(32))
    result = await other.reembed()
    assert result.chunks_embedded == 1
    hits = await other.search("beta", k=1)
    assert hits[0].path == "a.txt"


async def test_unindexed_workspace_searches_empty(db: Database, workspace: Path) -> None:
    assert await WorkspaceRagIndex(SqliteChunkStore(db), workspace).search("anything", k=3) == []


def test_an_unchanged_reindex_reads_no_text_and_saves_nothing(
    db: Database, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing changed: no file is read, no chunk text is read for the keyword index, nothing
    is embedded and no keyword index is saved again."""
    from kairox.retrieval import indexer, keyword_side

    monkeypatch.setattr(keyword_side, "SAVE_CHANGES", 1)
    for i in range(12):
        path = workspace / f"f{i}.md"
        path.write_text(f"note {i} about invoices and totals\n")
        os.utime(path, (time.time() - 60, time.time() - 60))  # older than the racy window
    store = SqliteChunkStore(db)
    index = WorkspaceRagIndex(store, workspace)
    first = index.index_sync()
    assert first.files_indexed == 12 and store.load_keyword_snapshot(index.workspace_id)
    calls: list[str] = []
    for name in ("keyword_documents", "save_keyword_snapshot", "chunks_missing_vectors"):
        real = getattr(store, name)
        monkeypatch.setattr(
            store, name, lambda *a, _n=name, _r=real, **k: calls.append(_n) or _r(*a, **k)
        )
    real_read = indexer.read_text_file
    monkeypatch.setattr(
        indexer, "read_text_file", lambda f, **k: calls.append(f.path) or real_read(f, **k)
    )
    again = WorkspaceRagIndex(store, workspace).index_sync()
    assert (again.files_indexed, again.files_unchanged, again.chunks_embedded) == (0, 12, 0)
    assert calls == []
    assert store.count_missing_vectors(index.workspace_id, index.embedder.model_id) == 0
