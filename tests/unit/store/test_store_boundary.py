"""The store boundary: SQL on the events table lives in ``kairox.store``, and everything above it
is typed by the protocols, so a backend is a new class (Postgres is one), not a hunt."""

from __future__ import annotations

import re
from pathlib import Path

import kairox

SRC = Path(kairox.__file__).parent
EVENTS_SQL = re.compile(r"\b(FROM|INTO|UPDATE|JOIN)\s+(events|event_tokens)\b", re.IGNORECASE)
BACKEND_CLASSES = re.compile(
    r"\b(SqliteEventStore|SqliteMemoryStore|SessionRegistry|PostgresEventStore|"
    r"PostgresMemoryStore|PostgresSessionRegistry|PgDatabase)\b"
)


def _modules_outside_store() -> list[Path]:
    """Every module above the store (``kairox.testing`` builds stores for tests on purpose)."""
    return [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] not in ("store", "testing")]


def test_no_sql_on_the_events_table_outside_the_store() -> None:
    offenders = [
        str(p.relative_to(SRC))
        for p in _modules_outside_store()
        if EVENTS_SQL.search(p.read_text())
    ]
    assert offenders == []


def test_consumers_name_protocols_not_backend_classes() -> None:
    offenders = [
        str(p.relative_to(SRC))
        for p in _modules_outside_store()
        if BACKEND_CLASSES.search(p.read_text())
    ]
    assert offenders == []
