"""Migration ``0440_unread_full_text`` on both stores: a home written with the full-text indexes
no search read (SQLite's FTS5 tables of chunks, history and memory units, Postgres's ``tsv``
columns and GIN indexes) loses them on open and nothing else: its chunks stay, keyword search
finds them, and new writes no longer pay for a second index."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairox.retrieval.embeddings.hashing import HashingEmbedder
from kairox.retrieval.indexer import index_workspace
from kairox.retrieval.search import HybridSearcher
from kairox.store.migration import Migration
from kairox.store.protocols import ChunkStore
from kairox.store.sql import SqlDatabase

EMBEDDER = HashingEmbedder(64)


def _open(store_url: str | None, home: Path, *, before: bool) -> tuple[SqlDatabase, ChunkStore]:
    def upto(migrations: tuple[Migration, ...]) -> tuple[Migration, ...]:
        names = [m.name for m in migrations]
        return migrations[: names.index("0440_unread_full_text")] if before else migrations

    if store_url is None:
        from kairox.store.chunks_sqlite import SqliteChunkStore
        from kairox.store.db import Database
        from kairox.store.migrations import ALL_MIGRATIONS

        db = Database.open(home / "kairox.db", upto(ALL_MIGRATIONS))
        return db, SqliteChunkStore(db)
    from kairox.store.postgres.chunks import PostgresChunkStore
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.schema import MIGRATIONS

    pg = PgDatabase.open(store_url, upto(MIGRATIONS))
    return pg, PostgresChunkStore(pg)


def _full_text(db: SqlDatabase, store_url: str | None) -> list[str]:
    """What is left of the full-text indexes: FTS5 tables and triggers, or ``tsv`` columns."""
    if store_url is None:
        rows = db.query("SELECT name FROM sqlite_master WHERE name LIKE '%fts%' ORDER BY name", ())
        return [str(r["name"]) for r in rows]
    rows = db.query(
        "SELECT table_name AS name FROM information_schema.columns WHERE column_name = 'tsv' "
        "AND table_schema = current_schema() ORDER BY table_name",
        (),
    )
    return [str(r["name"]) for r in rows]


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite in the home) or an empty Postgres database (not the migrated template)."""
    if request.param == "sqlite":
        return None
    server = request.getfixturevalue("pg_server")
    request.getfixturevalue("pg_url")  # its pools are closed after the test
    return str(server.fresh_database(migrated=False))


def test_the_unread_full_text_indexes_go_and_the_chunks_stay(
    tmp_path: Path, store_url: str | None
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(20):
        (root / f"f{i}.md").write_text(f"note {i} about the heron and the otter {i}\n")
    db, store = _open(store_url, tmp_path, before=True)
    ws = index_workspace(store, root, embedder=EMBEDDER).workspace_id
    assert _full_text(db, store_url)  # the old schema wrote them
    chunks = len(store.keyword_documents(ws))
    db.close()

    db, store = _open(store_url, tmp_path, before=False)
    try:
        assert _full_text(db, store_url) == []
        assert len(store.keyword_documents(ws)) == chunks == 20
        searcher = HybridSearcher(store, EMBEDDER)
        assert len(searcher.search(ws, "heron otter", k=50)) == 20
        (root / "new.md").write_text("the kingfisher dives\n")
        assert index_workspace(store, root, embedder=EMBEDDER).files_indexed == 1
        assert [h.path for h in searcher.search(ws, "kingfisher", k=5)] == ["new.md"]
    finally:
        db.close()
