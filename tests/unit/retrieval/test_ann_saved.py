"""The saved approximate vector index (``kairox.retrieval.ann_indexes`` on SQLite's
``vector_index_files``): a new store instance loads it instead of building it or reading the
matrix, catches it up with rows changed since the save, and rebuilds a damaged or foreign one
with nothing lost."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.unit.retrieval.test_ann import QUERIES, BagEmbedder, corpus, top_ids, write

from kairox.retrieval import ann
from kairox.retrieval.fusion import FusionMethod, SearchOptions
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.search import HybridSearcher
from kairox.retrieval.workspace import WorkspaceRagIndex
from kairox.store.chunks_sqlite import SqliteChunkStore
from kairox.store.db import Database
from kairox.store.vector_index_files import FOLDER


class Home:
    """A home database that is opened anew for each searcher, as each process does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.opened: list[Database] = []

    def searcher(self, *, exact: bool = False) -> HybridSearcher:
        db = Database.open(self.path / "kairox.db")
        self.opened.append(db)
        rows = 10**9 if exact else 1
        return HybridSearcher(SqliteChunkStore(db), BagEmbedder(), SearchOptions(ann_min_rows=rows))

    def store(self) -> SqliteChunkStore:
        return self.searcher().chunks  # type: ignore[return-value]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    found = Home(tmp_path / "home")
    yield found
    for db in found.opened:
        db.close()


def indexed(home: Home, root: Path) -> str:
    corpus(root)
    return index_workspace(home.store(), root, embedder=BagEmbedder()).workspace_id


def no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(matrix: object) -> ann.VectorIndex:
        raise AssertionError("the saved index should have been loaded, not built")

    monkeypatch.setattr(ann.VectorIndex, "build", classmethod(lambda cls, m: refuse(m)))


def agrees_with_exact(home: Home, searcher: HybridSearcher, ws: str, queries: list[str]) -> None:
    exact = home.searcher(exact=True)
    for query in queries:
        for fusion in (FusionMethod.VECTOR, FusionMethod.MINMAX):
            wanted = top_ids(exact, ws, query, fusion)
            assert wanted
            assert top_ids(searcher, ws, query, fusion) == wanted


def test_a_new_instance_loads_the_saved_index(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = indexed(home, tmp_path / "ws")
    home.searcher().warm_vectors(ws)  # what ``kairox index`` does: built and saved
    assert list((home.path / FOLDER).glob("*.hnsw"))

    no_build(monkeypatch)
    fresh = home.searcher()
    matrix, index = fresh.vector_side(ws)  # the first search walks it: no background build
    assert index is not None and len(index) == 300
    assert len(matrix.ids) == 0  # the scope's vectors were never read into a matrix
    agrees_with_exact(home, fresh, ws, QUERIES)


def test_the_saved_index_catches_up_rows_changed_after_the_save(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    ws = indexed(home, root)
    home.searcher().warm_vectors(ws)
    (root / "f000.txt").unlink()
    write(root, "f001.txt", "zebra zebra zebra")
    write(root, "new.txt", "quokka quokka quokka")
    index_workspace(home.store(), root, embedder=BagEmbedder())  # no searcher: not re-saved

    no_build(monkeypatch)
    fresh = home.searcher()
    assert fresh.vector_side(ws)[1] is not None
    first = fresh.search(ws, "quokka", k=1, fusion=FusionMethod.VECTOR)[0]
    assert first.path == "new.txt"
    assert fresh.search(ws, "zebra", k=1, fusion=FusionMethod.VECTOR)[0].path == "f001.txt"
    hits = fresh.search(ws, "river mountain", k=50, fusion=FusionMethod.VECTOR)
    assert all(h.path != "f000.txt" for h in hits)
    agrees_with_exact(home, fresh, ws, [*QUERIES, "zebra", "quokka"])


@pytest.mark.parametrize("damage", ["truncated graph", "garbage table", "graph gone"])
def test_a_damaged_saved_index_is_rebuilt(
    home: Home, tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    ws = indexed(home, tmp_path / "ws")
    home.searcher().warm_vectors(ws)
    folder = home.path / FOLDER
    (graph,) = folder.glob("*.hnsw")
    (table,) = folder.glob("*.npz")
    if damage == "truncated graph":
        graph.write_bytes(graph.read_bytes()[: graph.stat().st_size // 2])
    elif damage == "garbage table":
        table.write_bytes(b"not an index")
    else:
        graph.unlink()

    fresh = home.searcher()
    with caplog.at_level(logging.WARNING):
        index = fresh.build_vector_index(ws)
    assert index is not None and len(index) == 300
    assert any("rebuilt" in r.getMessage() for r in caplog.records)
    agrees_with_exact(home, fresh, ws, QUERIES)
    # and the rebuilt index was saved in place of the damaged one: the next instance loads it
    assert len(list(folder.glob("*.hnsw"))) == 1
    assert home.searcher().vector_side(ws)[1] is not None


def test_an_index_saved_with_older_build_parameters_is_rebuilt_with_the_current_ones(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A graph saved before the build parameters changed (``FORMAT`` bumped with them) is not
    loaded: the next instance builds the current graph, saves it over the old one, and the one
    after loads that."""
    ws = indexed(home, tmp_path / "ws")
    with monkeypatch.context() as before:
        before.setattr(ann, "FORMAT", ann.FORMAT - 1)
        before.setattr(ann, "M", 16)
        home.searcher().warm_vectors(ws)
    folder = home.path / FOLDER
    (old,) = folder.glob("*.hnsw")

    fresh = home.searcher()
    with caplog.at_level(logging.WARNING):
        index = fresh.build_vector_index(ws)
    assert index is not None and len(index) == 300
    assert any("older format: rebuilt" in r.getMessage() for r in caplog.records)
    assert not old.exists()
    no_build(monkeypatch)
    loaded = home.searcher().vector_side(ws)[1]
    assert loaded is not None and loaded._index.M == ann.M != 16
    agrees_with_exact(home, fresh, ws, QUERIES)


def test_a_saved_index_of_another_database_is_not_used(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A home whose database was made anew beside the old index files: same workspace id and
    generation, other rows. The sample check finds it out; results are the new store's."""
    root = tmp_path / "ws"
    ws = indexed(home, root)
    home.searcher().warm_vectors(ws)
    saved = tmp_path / "saved"
    shutil.copytree(home.path / FOLDER, saved)
    for db in home.opened:
        db.close()
    home.opened.clear()
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
    agrees_with_exact(home, fresh, ws, ["quokka zebra", "zebra"])


def test_indexing_a_workspace_saves_its_index(home: Home, tmp_path: Path) -> None:
    """``kairox index`` leaves the index saved: when files changed, and when none did but no
    index was saved yet (a workspace indexed before), so the next one-shot search loads it."""
    root = tmp_path / "ws"
    corpus(root)
    options = SearchOptions(ann_min_rows=1)
    index = WorkspaceRagIndex(home.store(), root, embedder=BagEmbedder(), options=options)
    assert index.index_sync().files_indexed == 300
    folder = home.path / FOLDER
    assert len(list(folder.glob("*.npz"))) == 1
    shutil.rmtree(folder)
    assert index.index_sync().files_indexed == 0
    assert len(list(folder.glob("*.npz"))) == 1
    small = WorkspaceRagIndex(home.store(), root, embedder=BagEmbedder())  # under 200k rows
    shutil.rmtree(folder)
    small.index_sync()
    assert not folder.exists()
