"""The store boundary: SQL on every table the store owns lives in ``kairox.store``, and everything
above it is typed by the protocols, so a backend is a new class (Postgres is one), not a hunt."""

from __future__ import annotations

import re
from pathlib import Path

import kairox
from kairox.store.migrations import ALL_MIGRATIONS
from kairox.store.postgres.schema import MIGRATIONS as PG_MIGRATIONS

SRC = Path(kairox.__file__).parent
CREATED = re.compile(r"CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(\w+)", re.IGNORECASE)
TABLES = sorted(
    {name for m in (*ALL_MIGRATIONS, *PG_MIGRATIONS) for name in CREATED.findall(m.sql)}
    - {name + "_new" for m in ALL_MIGRATIONS for name in CREATED.findall(m.sql)}
)
TABLE_SQL = re.compile(
    r"\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+(" + "|".join(TABLES) + r")\b", re.IGNORECASE
)
BACKEND_CLASSES = re.compile(
    r"\b(SqliteEventStore|SqliteMemoryStore|SessionRegistry|PostgresEventStore|"
    r"PostgresMemoryStore|PostgresSessionRegistry|PgDatabase|SqliteChunkStore|"
    r"PostgresChunkStore|SqliteHistoryStore|PostgresHistoryStore|SqliteMemoryIndexStore|"
    r"PostgresMemoryIndexStore)\b"
)


def _modules_outside_store() -> list[Path]:
    """Every module above the store (``kairox.testing`` builds stores for tests on purpose)."""
    return [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] not in ("store", "testing")]


def test_every_table_the_store_owns_is_known() -> None:
    owned = {"events", "event_tokens", "sessions", "workspaces", "session_leases", "memories"}
    owned |= {"chunks", "chunk_vectors", "history_units", "history_vectors", "history_workspaces"}
    owned |= {"memory_units", "memory_unit_vectors", "memory_index_state", "access_tokens"}
    assert owned <= set(TABLES)


def test_no_sql_on_any_store_table_outside_the_store() -> None:
    offenders = [
        f"{p.relative_to(SRC)}: {match.group(0)}"
        for p in _modules_outside_store()
        if (match := TABLE_SQL.search(p.read_text()))
    ]
    assert offenders == []


def test_consumers_name_protocols_not_backend_classes() -> None:
    offenders = [
        str(p.relative_to(SRC))
        for p in _modules_outside_store()
        if BACKEND_CLASSES.search(p.read_text())
    ]
    assert offenders == []


def test_migrations_both_stores_share_have_one_order() -> None:
    sqlite = [m.name for m in ALL_MIGRATIONS]
    postgres = [m.name for m in PG_MIGRATIONS]
    assert len(set(sqlite)) == len(sqlite) and len(set(postgres)) == len(postgres)
    assert [n for n in sqlite if n in postgres] == [n for n in postgres if n in sqlite]
    # Both branches' schema changes are on both stores.
    for name in ("0020_memory_forget_proposals", "0200_history_index", "0300_memory_index"):
        assert name in sqlite and name in postgres
