from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kairox.core.errors import AppendOnlyViolation, StoreError
from kairox.core.events import SessionStarted, UserMessageAdded
from kairox.store.db import Database, Migration
from kairox.store.events import SqliteEventStore
from kairox.testing import FakeClock


class WordCounter:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


class CharCounter:
    name = "chars"

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text)


@pytest.fixture
def store(tmp_path: Path) -> SqliteEventStore:
    return SqliteEventStore(Database.open(tmp_path / "k.db"), FakeClock(), WordCounter())


def test_database_uses_wal_and_busy_timeout(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "k.db")
    assert db.query_one("PRAGMA journal_mode")[0] == "wal"  # type: ignore[index]
    assert db.query_one("PRAGMA busy_timeout")[0] >= 1000  # type: ignore[index]
    assert "0001_events" in db.applied_migrations()


def test_migrations_apply_once(tmp_path: Path) -> None:
    extra = Migration("9999_extra", "CREATE TABLE extra(x INTEGER);")
    from kairox.store.migrations import ALL_MIGRATIONS

    db = Database.open(tmp_path / "k.db", [*ALL_MIGRATIONS, extra])
    db.close()
    db = Database.open(tmp_path / "k.db", [*ALL_MIGRATIONS, extra])
    assert db.applied_migrations().count("9999_extra") == 1


def test_seq_is_global_and_monotonic(store: SqliteEventStore) -> None:
    a = store.append(UserMessageAdded(turn=1, text="a b"), session_id="s1", workspace_id="w")
    b = store.append(UserMessageAdded(turn=1, text="c"), session_id="s2", workspace_id="w")
    assert b.seq == a.seq + 1
    assert [e.seq for e in store.read(after=a.seq)] == [b.seq]
    assert [e.seq for e in store.read(session_id="s1")] == [a.seq]


def test_events_are_append_only(store: SqliteEventStore) -> None:
    e = store.append(UserMessageAdded(turn=1, text="x"), session_id="s", workspace_id="w")
    with pytest.raises(AppendOnlyViolation):
        store.db.execute("UPDATE events SET payload = '{}' WHERE seq = ?", (e.seq,))
    with pytest.raises(AppendOnlyViolation):
        store.db.execute("DELETE FROM events WHERE seq = ?", (e.seq,))
    assert store.read()[0].payload == UserMessageAdded(turn=1, text="x")


def test_token_count_stored_at_append(store: SqliteEventStore) -> None:
    e = store.append(
        UserMessageAdded(turn=1, text="one two three"), session_id="s", workspace_id="w"
    )
    assert e.tokens == 3
    started = store.append(
        SessionStarted(name="n", workspace_path="/", profile="p"), session_id="s", workspace_id="w"
    )
    assert started.tokens is None
    assert store.token_counts([e.seq, started.seq], WordCounter()) == {e.seq: 3}


def test_missing_counts_for_another_tokenizer_are_computed_once(store: SqliteEventStore) -> None:
    e = store.append(UserMessageAdded(turn=1, text="hello"), session_id="s", workspace_id="w")
    chars = CharCounter()
    assert store.token_counts([e.seq], chars) == {e.seq: 5}
    assert store.token_counts([e.seq], chars) == {e.seq: 5}
    assert chars.calls == 1


def test_corrupt_database_gives_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "k.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError) as info:
        Database.open(bad)
    assert "\n" not in str(info.value)
    assert "move the file aside" in str(info.value)


def test_atomic_rolls_back_nested_savepoint(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "k.db", [Migration("t", "CREATE TABLE t(x INTEGER);")])
    with db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(sqlite3.IntegrityError), db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
            raise sqlite3.IntegrityError("boom")
    assert [r[0] for r in db.query("SELECT x FROM t")] == [1]
