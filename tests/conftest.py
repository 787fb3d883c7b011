"""Every test gets its own home directory; nothing reads the real user config or data."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from helpers import scripted

if TYPE_CHECKING:
    from kairox.store.protocols import ChunkStore
    from kairox.testing.postgres import EmbeddedPostgres


# Whole modules that drive a real browser, terminal or embedding model (``make test-fast``
# leaves them out, with everything that needs Postgres).
SLOW_MODULES = (
    "integration/web/test_web_browser.py",
    "integration/tui/test_tmux.py",
    "integration/retrieval/test_rag_real_backends.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.as_posix()
        if any(path.endswith(module) for module in SLOW_MODULES):
            item.add_marker(pytest.mark.slow)
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("store_url") == "postgres"
        if on_postgres or fixtures & {"pg_url", "pg_server"}:
            item.add_marker(pytest.mark.postgres)


@pytest.fixture(autouse=True)
def kairox_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "kairox-home"
    monkeypatch.setenv("KAIROX_HOME", str(home))
    monkeypatch.delenv("KAIROX_STORE_URL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a scripted-model JSON Lines file under ``tmp_path``; returns its ``scripted:`` spec
    (``helpers.scripted``)."""
    return functools.partial(scripted, tmp_path)


# -- Postgres: one embedded server per test session, a fresh database per test ---------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[EmbeddedPostgres]:
    from kairox.testing.postgres import EmbeddedPostgres

    server = EmbeddedPostgres.start(durable=False)
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: EmbeddedPostgres, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh, empty Postgres database; every pool opened on it is closed after the test."""
    from kairox.store.postgres.db import PgDatabase

    url = pg_server.fresh_database()
    opened: list[PgDatabase] = []
    real_open = PgDatabase.open.__func__  # type: ignore[attr-defined]

    def tracking_open(cls: type[PgDatabase], *args: Any, **kwargs: Any) -> PgDatabase:
        db: PgDatabase = real_open(cls, *args, **kwargs)
        opened.append(db)
        return db

    monkeypatch.setattr(PgDatabase, "open", classmethod(tracking_open))
    yield url
    for db in opened:
        db.close()
    pg_server.drop_database(url)


STORE_BACKENDS = ("sqlite", "postgres")


@pytest.fixture(params=STORE_BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str | None:
    """Run the test once per store backend: None (SQLite in the home) or a Postgres URL."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def chunk_store(tmp_path: Path, store_url: str | None) -> Iterator[ChunkStore]:
    """A ``ChunkStore`` on each backend: a SQLite file under ``tmp_path``, or Postgres."""
    if store_url is not None:
        from kairox.store.postgres.chunks import PostgresChunkStore
        from kairox.store.postgres.db import PgDatabase
        from kairox.store.postgres.schema import MIGRATIONS

        yield PostgresChunkStore(PgDatabase.open(store_url, MIGRATIONS))
        return
    from kairox.store.chunks_sqlite import SqliteChunkStore
    from kairox.store.db import Database

    db = Database.open(tmp_path / "kairox.db")
    yield SqliteChunkStore(db)
    db.close()


@pytest.fixture
def on_store(store_url: str | None, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Run on SQLite and on Postgres: the facades and CLI processes a test opens get the store's
    URL as a user sets it (``KAIROX_STORE_URL``); None on SQLite."""
    if store_url is not None:
        monkeypatch.setenv("KAIROX_STORE_URL", store_url)
    return store_url
