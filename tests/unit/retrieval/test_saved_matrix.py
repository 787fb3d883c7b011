"""The saved vector matrix (``kairox.retrieval.saved_matrix``): below ``ann_min_rows`` a new
store instance (a fresh process) maps the matrix saved beside the SQLite database instead of
reading every vector row, catches it up with the rows changed since, and reads a damaged or
foreign one from the store again with nothing lost."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.unit.retrieval.test_ann import QUERIES, BagEmbedder, corpus, top_ids, write

from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.search import HybridSearcher
from kairox.retrieval.workspace import WorkspaceRagIndex
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.vector_index_files import FOLDER

SAVES = SearchOptions(ann_min_rows=10**9, saved_matrix_min_rows=1)
NEVER = SearchOptions(ann_min_rows=10**9, saved_matrix_min_rows=10**9)


class Unsaved(SqliteChunkStore):
    """A store that keeps no files: every matrix is read from its rows (the baseline)."""

    def vector_index_files(self, scope: str, model: str) -> None:
        return None


class Home:
    """A home database opened anew for each searcher, as each process does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.opened: list[Database] = []

    def searcher(self, options: SearchOptions = SAVES, *, files: bool = True) -> HybridSearcher:
        db = Database.open(self.path / "kairox.db")
        self.opened.append(db)
        store = SqliteChunkStore(db) if files else Unsaved(db)
        return HybridSearcher(store, BagEmbedder(), options)

    def store(self) -> SqliteChunkStore:
        return self.searcher().chunks  # type: ignore[return-value]

    def saved(self) -> list[Path]:
        return sorted((self.path / FOLDER).glob("*.matrix.*"))

    def close(self) -> None:
        for db in self.opened:
            db.close()
        self.opened.clear()


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    found = Home(tmp_path / "home")
    yield found
    found.close()


def indexed(home: Home, root: Path) -> str:
    corpus(root)
    return index_workspace(home.store(), root, embedder=BagEmbedder()).workspace_id


def no_full_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> object:
        raise AssertionError("the saved matrix should have been mapped, not read row by row")

    monkeypatch.setattr(SqliteChunkStore, "load_vectors", refuse)


def agrees_with_the_store(
    home: Home, searcher: HybridSearcher, ws: str, queries: list[str]
) -> None:
    unsaved = home.searcher(files=False)
    for query in queries:
        for fusion in (FusionMethod.VECTOR, FusionMethod.MINMAX):
            wanted = top_ids(unsaved, ws, query, fusion)
            assert wanted
            assert top_ids(searcher, ws, query, fusion) == wanted


def test_a_new_instance_maps_the_saved_matrix(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = indexed(home, tmp_path / "ws")
    assert not home.saved()
    first = home.searcher()
    first.search(ws, "river mountain", k=5)  # read from the store once, and saved
    assert [p.suffix for p in home.saved()] == [".npy", ".npz"]

    no_full_read(monkeypatch)
    monkeypatch.setattr(
        SqliteChunkStore, "vector_keys", lambda *a: pytest.fail("same generation: no versions read")
    )
    fresh = home.searcher()
    ids, vectors = fresh.matrix(ws)
    assert len(ids) == 300 and isinstance(vectors, np.memmap)
    monkeypatch.undo()
    agrees_with_the_store(home, fresh, ws, QUERIES)


def test_the_saved_matrix_catches_up_rows_changed_after_the_save(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    ws = indexed(home, root)
    home.searcher().search(ws, "omega", k=5)
    (root / "f000.txt").unlink()
    write(root, "f001.txt", "zebra zebra zebra")
    write(root, "new.txt", "quokka quokka quokka")
    index_workspace(home.store(), root, embedder=BagEmbedder())  # no searcher: not re-saved

    read: list[int] = []
    load_vectors_of = SqliteChunkStore.load_vectors_of

    def counted(self: SqliteChunkStore, scope: str, model: str, ids: list[int]) -> object:
        read.extend(ids)
        return load_vectors_of(self, scope, model, ids)

    no_full_read(monkeypatch)
    monkeypatch.setattr(SqliteChunkStore, "load_vectors_of", counted)
    fresh = home.searcher()
    assert fresh.search(ws, "quokka", k=1, fusion=FusionMethod.VECTOR)[0].path == "new.txt"
    assert len(read) == 2  # only the changed and the new file's rows were read
    assert fresh.search(ws, "zebra", k=1, fusion=FusionMethod.VECTOR)[0].path == "f001.txt"
    hits = fresh.search(ws, "river mountain", k=50, fusion=FusionMethod.VECTOR)
    assert all(h.path != "f000.txt" for h in hits)
    monkeypatch.undo()
    agrees_with_the_store(home, fresh, ws, [*QUERIES, "zebra", "quokka"])


@pytest.mark.parametrize("damage", ["truncated rows", "garbage table", "rows gone"])
def test_a_damaged_saved_matrix_is_read_again(
    home: Home, tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    ws = indexed(home, tmp_path / "ws")
    home.searcher().search(ws, "omega", k=5)
    rows, table = home.saved()
    if damage == "truncated rows":
        rows.write_bytes(rows.read_bytes()[: rows.stat().st_size // 2])
    elif damage == "garbage table":
        table.write_bytes(b"not a matrix")
    else:
        rows.unlink()

    fresh = home.searcher()
    with caplog.at_level(logging.WARNING):
        assert len(fresh.matrix(ws)[0]) == 300
    assert any("does not read" in r.getMessage() for r in caplog.records)
    agrees_with_the_store(home, fresh, ws, QUERIES)
    # read from the store again and saved in place of the damaged one: no orphan left
    assert [p.suffix for p in home.saved()] == [".npy", ".npz"]
    assert isinstance(home.searcher().matrix(ws)[1], np.memmap)


def test_a_saved_matrix_of_another_database_is_not_used(
    home: Home, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A home whose database was made anew beside the old files: same workspace id and
    generation, other rows. The sample check finds it out; results are the new store's."""
    root = tmp_path / "ws"
    ws = indexed(home, root)
    home.searcher().search(ws, "omega", k=5)
    saved = tmp_path / "saved"
    shutil.copytree(home.path / FOLDER, saved)
    home.close()
    shutil.rmtree(home.path)
    shutil.rmtree(root)
    for i in range(300):
        write(root, f"g{i:03d}.txt", f"quokka {i} " + " ".join(["zebra"] * (i % 7 + 1)))
    assert index_workspace(home.store(), root, embedder=BagEmbedder()).workspace_id == ws
    shutil.copytree(saved, home.path / FOLDER, dirs_exist_ok=True)

    fresh = home.searcher()
    with caplog.at_level(logging.WARNING):
        hits = fresh.search(ws, "quokka zebra", k=10, fusion=FusionMethod.VECTOR)
    assert hits and all(h.path.startswith("g") for h in hits)
    assert any("not this store's" in r.getMessage() for r in caplog.records)
    agrees_with_the_store(home, fresh, ws, ["quokka zebra", "zebra"])


def test_indexing_leaves_the_matrix_saved_only_where_no_hnsw_index_holds_it(
    home: Home, tmp_path: Path
) -> None:
    """``kairox index`` saves the matrix below ``ann_min_rows`` (so the next one-shot search maps
    it), nothing below ``saved_matrix_min_rows``, and only the HNSW index above."""
    root = tmp_path / "ws"
    corpus(root)
    index = WorkspaceRagIndex(home.store(), root, embedder=BagEmbedder(), options=SAVES)
    assert index.index_sync().files_indexed == 300
    assert [p.suffix for p in home.saved()] == [".npy", ".npz"]

    shutil.rmtree(home.path / FOLDER)
    small = WorkspaceRagIndex(home.store(), root, embedder=BagEmbedder(), options=NEVER)
    write(root, "new.txt", "quokka")
    small.index_sync()
    assert not home.saved()

    walked = SearchOptions(ann_min_rows=1, saved_matrix_min_rows=1)
    big = WorkspaceRagIndex(home.store(), root, embedder=BagEmbedder(), options=walked)
    write(root, "newer.txt", "zebra")
    big.index_sync()
    assert not home.saved() and list((home.path / FOLDER).glob("*.hnsw"))


def test_a_saved_matrix_is_removed_once_the_hnsw_index_holds_the_rows(
    home: Home, tmp_path: Path
) -> None:
    ws = indexed(home, tmp_path / "ws")
    home.searcher().search(ws, "omega", k=5)
    assert len(home.saved()) == 2
    grown = home.searcher(SearchOptions(ann_min_rows=1, saved_matrix_min_rows=1))
    grown.search(ws, "omega", k=5)  # the scope is past ann_min_rows now: its matrix is read
    assert not home.saved()
