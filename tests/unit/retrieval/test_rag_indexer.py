"""Indexing: change detection, re-index touching only changed files, deletion, skips, models."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kairox.core.errors import RetrievalError
from kairox.core.ids import workspace_id_for
from kairox.retrieval.chunking import ChunkingOptions
from kairox.retrieval.embeddings.base import FloatMatrix
from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.indexer import (
    ChunksEmbedded,
    FileOutcome,
    FileProcessed,
    FilesRemoved,
    IndexEvent,
    IndexFinished,
    WalkFinished,
    index_workspace,
    reembed,
)
from kairox.retrieval.search import HybridSearcher
from kairox.retrieval.walker import SkipReason
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database

HOUR_NS = 3600 * 10**9


class CountingEmbedder:
    """A hashing embedder that records every text it embeds."""

    def __init__(self, dimensions: int = 64, fail: bool = False) -> None:
        self.inner = HashingEmbedder(dimensions)
        self.texts: list[str] = []
        self.fail = fail

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if self.fail:
            raise RetrievalError(self.model_id, "backend down")
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database.open(tmp_path / "kairox.db")
    yield database
    database.close()


def write(root: Path, rel: str, data: str | bytes, *, age_ns: int = HOUR_NS) -> Path:
    """Write a file whose mtime lies ``age_ns`` in the past (old enough to be trusted)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    stamp = path.stat().st_mtime_ns - age_ns
    os.utime(path, ns=(stamp, stamp))
    return path


def counts(db: Database, root: Path) -> dict[str, int]:
    ws = workspace_id_for(root)
    one = lambda sql: int(db.query_one(sql, (ws,))[0])  # noqa: E731
    return {
        "files": one("SELECT count(*) FROM chunk_files WHERE workspace_id = ?"),
        "chunks": one("SELECT count(*) FROM chunks WHERE workspace_id = ?"),
        "keyword": len(SqliteChunkStore(db).keyword_documents(ws)),
        "vectors": one("SELECT count(*) FROM chunk_vectors WHERE workspace_id = ?"),
    }


def keyword_hits(db: Database, root: Path, word: str) -> int:
    """Chunks the keyword side finds for ``word`` (what ``kairox search`` ranks)."""
    searcher = HybridSearcher(SqliteChunkStore(db), HashingEmbedder(64))
    return len(searcher.keyword(workspace_id_for(root), word, 10))


def chunk_ids(db: Database, path: str) -> list[int]:
    return [
        int(r[0]) for r in db.query("SELECT id FROM chunks WHERE path = ? ORDER BY id", (path,))
    ]


def seed(root: Path) -> None:
    write(root, "a.py", "def alpha():\n    return 'apple'\n")
    write(root, "b.md", "# Banana\n\nbanana bread recipe\n")
    write(root, "c.txt", "cherry orchard\n")


def test_first_index_stores_chunks_keyword_documents_and_vectors(
    db: Database, workspace: Path
) -> None:
    seed(workspace)
    embedder = CountingEmbedder()
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=embedder)
    assert (report.files_seen, report.files_indexed, report.files_unchanged) == (3, 3, 0)
    assert report.chunks_written == report.chunks_total == 3
    assert report.chunks_embedded == 3
    assert report.workspace_id == workspace_id_for(workspace)
    assert report.model == "hashing:64"
    assert counts(db, workspace) == {"files": 3, "chunks": 3, "keyword": 3, "vectors": 3}
    row = db.query_one("SELECT path, start_line, end_line, file_hash, chunk_hash FROM chunks "
                       "WHERE path = 'a.py'")  # fmt: skip
    assert row is not None
    assert (row[0], row[1], row[2]) == ("a.py", 1, 2)
    assert len(row[3]) == 64 and len(row[4]) == 64


def test_reindex_of_unchanged_workspace_reads_and_embeds_nothing(
    db: Database, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(workspace)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    embedder = CountingEmbedder()
    opened: list[str] = []
    import kairox.retrieval.indexer as indexer_module

    real = indexer_module.read_text_file
    monkeypatch.setattr(
        indexer_module, "read_text_file", lambda f, **kw: opened.append(f.path) or real(f, **kw)
    )
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=embedder)
    assert (report.files_indexed, report.files_unchanged, report.chunks_written) == (0, 3, 0)
    assert opened == [] and embedder.texts == []


def test_only_the_changed_file_is_reindexed(db: Database, workspace: Path) -> None:
    seed(workspace)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    before_b, before_c = chunk_ids(db, "b.md"), chunk_ids(db, "c.txt")
    write(workspace, "a.py", "def alpha():\n    return 'apricot'\n", age_ns=0)
    embedder = CountingEmbedder()
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=embedder)
    assert (report.files_indexed, report.files_unchanged) == (1, 2)
    assert embedder.texts == ["def alpha():\n    return 'apricot'"]
    assert chunk_ids(db, "b.md") == before_b and chunk_ids(db, "c.txt") == before_c
    assert keyword_hits(db, workspace, "apricot") == 1 and keyword_hits(db, workspace, "apple") == 0
    assert counts(db, workspace) == {"files": 3, "chunks": 3, "keyword": 3, "vectors": 3}


def test_same_size_edit_with_restored_mtime_is_caught_while_racy(
    db: Database, workspace: Path
) -> None:
    path = write(workspace, "a.txt", "first version\n", age_ns=0)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    stamp = path.stat().st_mtime_ns
    path.write_text("other version\n", encoding="utf-8")  # same size
    os.utime(path, ns=(stamp, stamp))  # and the same mtime
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    assert report.files_indexed == 1
    assert keyword_hits(db, workspace, "other") == 1 and keyword_hits(db, workspace, "first") == 0


def test_touched_but_identical_file_keeps_its_chunks(db: Database, workspace: Path) -> None:
    path = write(workspace, "a.txt", "stable text\n")
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    ids = chunk_ids(db, "a.txt")
    os.utime(path)  # new mtime, same bytes
    embedder = CountingEmbedder()
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=embedder)
    assert (report.files_indexed, report.files_unchanged) == (0, 1)
    assert chunk_ids(db, "a.txt") == ids and embedder.texts == []


def test_deleted_file_leaves_chunks_keyword_documents_and_vectors(
    db: Database, workspace: Path
) -> None:
    seed(workspace)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    (workspace / "b.md").unlink()
    events: list[IndexEvent] = []
    report = index_workspace(
        SqliteChunkStore(db), workspace, embedder=CountingEmbedder(), progress=events.append
    )
    assert report.files_deleted == 1 and report.chunks_total == 2
    assert counts(db, workspace) == {"files": 2, "chunks": 2, "keyword": 2, "vectors": 2}
    assert keyword_hits(db, workspace, "banana") == 0
    assert FilesRemoved(("b.md",)) in events


def test_newly_ignored_and_newly_binary_files_leave_the_index(
    db: Database, workspace: Path
) -> None:
    seed(workspace)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    write(workspace, ".kairoxignore", "a.py\n")
    write(workspace, "c.txt", b"cherry\x00\x01binary", age_ns=0)
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    assert report.files_deleted == 2
    assert [(s.path, s.reason) for s in report.skipped] == [("c.txt", SkipReason.BINARY)]
    assert keyword_hits(db, workspace, "apple") == 0 and keyword_hits(db, workspace, "cherry") == 0
    assert keyword_hits(db, workspace, "banana") == 1


def test_skipped_files_are_reported_and_do_not_stop_the_run(db: Database, workspace: Path) -> None:
    write(workspace, "good.txt", "good text\n")
    write(workspace, "blob.bin", b"\x00\x01\x02")
    write(workspace, "latin.txt", "naïve\n".encode("latin-1"))
    write(workspace, "huge.txt", "x" * 5000)
    report = index_workspace(
        SqliteChunkStore(db), workspace, embedder=CountingEmbedder(), max_file_bytes=4096
    )
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons == {
        "blob.bin": SkipReason.BINARY,
        "latin.txt": SkipReason.NOT_UTF8,
        "huge.txt": SkipReason.TOO_LARGE,
    }
    assert report.files_indexed == 1 and counts(db, workspace)["chunks"] == 1


def test_progress_events_are_typed_and_complete(db: Database, workspace: Path) -> None:
    seed(workspace)
    write(workspace, "bad.bin", b"\x00")
    events: list[IndexEvent] = []
    report = index_workspace(
        SqliteChunkStore(db), workspace, embedder=CountingEmbedder(), progress=events.append
    )
    assert events[0] == WalkFinished(str(workspace.resolve()), 4, 0, 0)
    per_file = [e for e in events if isinstance(e, FileProcessed)]
    assert sorted(e.done for e in per_file) == [1, 2, 3, 4]
    assert all(e.total == 4 for e in per_file)
    outcomes = {e.path: e.outcome for e in per_file}
    assert outcomes["bad.bin"] is FileOutcome.SKIPPED
    assert outcomes["a.py"] is FileOutcome.INDEXED
    assert events[-1] == IndexFinished(report)


def test_changing_the_model_reembeds_and_keeps_one_vector_per_chunk_and_model(
    db: Database, workspace: Path
) -> None:
    seed(workspace)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder(64))
    wide = CountingEmbedder(32)
    events: list[IndexEvent] = []
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=wide, progress=events.append)
    assert report.files_indexed == 0 and report.chunks_embedded == 3 and len(wide.texts) == 3
    assert [e for e in events if isinstance(e, ChunksEmbedded)][-1] == ChunksEmbedded(
        "hashing:32", 3, 3
    )
    models = db.query("SELECT model, count(*), min(dims) FROM chunk_vectors GROUP BY model")
    assert sorted(tuple(r) for r in models) == [("hashing:32", 3, 32), ("hashing:64", 3, 64)]
    again = reembed(SqliteChunkStore(db), report.workspace_id, CountingEmbedder(32))
    assert again.chunks_embedded == 0


def test_reembed_fills_in_a_new_model_with_progress(db: Database, workspace: Path) -> None:
    for i in range(70):
        write(workspace, f"doc{i}.txt", f"document number {i}\n")
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder(64))
    events: list[IndexEvent] = []
    result = reembed(SqliteChunkStore(db), report.workspace_id, CountingEmbedder(16), events.append)
    assert result.chunks_embedded == 70 and result.model == "hashing:16"
    assert events == [ChunksEmbedded("hashing:16", 64, 70), ChunksEmbedded("hashing:16", 70, 70)]


def test_unchanged_chunks_of_an_edited_file_reuse_their_vectors(
    db: Database, workspace: Path
) -> None:
    functions = [f"def f{i}(x):\n    return x + {i}\n" for i in range(6)]
    write(workspace, "m.py", "\n".join(functions))
    options = ChunkingOptions(max_chars=40, overlap_lines=0)
    index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder(), chunking=options)
    functions[3] = "def f3(x):\n    return x * 3\n"
    write(workspace, "m.py", "\n".join(functions), age_ns=0)
    embedder = CountingEmbedder()
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=embedder, chunking=options)
    assert report.files_indexed == 1 and report.chunks_written == 6
    assert embedder.texts == ["def f3(x):\n    return x * 3"]
    assert counts(db, workspace)["vectors"] == 6


def test_a_new_chunking_rebuilds_every_file(db: Database, workspace: Path) -> None:
    write(workspace, "long.txt", "\n".join(f"line {i} of text" for i in range(40)))
    first = index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    second = index_workspace(
        SqliteChunkStore(db),
        workspace,
        embedder=CountingEmbedder(),
        chunking=ChunkingOptions(max_chars=100),
    )
    assert second.files_indexed == 1
    assert second.chunks_total > first.chunks_total
    third = index_workspace(
        SqliteChunkStore(db),
        workspace,
        embedder=CountingEmbedder(),
        chunking=ChunkingOptions(max_chars=100),
    )
    assert third.files_indexed == 0


def test_embedding_failure_raises_and_a_later_run_completes(db: Database, workspace: Path) -> None:
    seed(workspace)
    with pytest.raises(RetrievalError, match="backend down"):
        index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder(fail=True))
    assert counts(db, workspace)["chunks"] == 0
    report = index_workspace(SqliteChunkStore(db), workspace, embedder=CountingEmbedder())
    assert report.files_indexed == 3
    assert counts(db, workspace) == {"files": 3, "chunks": 3, "keyword": 3, "vectors": 3}
