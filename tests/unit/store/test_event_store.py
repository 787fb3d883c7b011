from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kairox.core.errors import AppendOnlyViolation, StoreError
from kairox.core.events import SessionStarted, UserMessageAdded
from kairox.store.db import Database
from kairox.store.events import SqliteEventStore
from kairox.store.migration import Migration
from kairox.store.protocols import EventStore
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
def store(tmp_path: Path, store_url: str | None) -> EventStore:
    """The contract runs on both backends (``store_url`` is None for SQLite)."""
    if store_url is None:
        return SqliteEventStore(Database.open(tmp_path / "k.db"), FakeClock(), WordCounter())
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.events import PostgresEventStore
    from kairox.store.postgres.schema import MIGRATIONS

    return PostgresEventStore(PgDatabase.open(store_url, MIGRATIONS), FakeClock(), WordCounter())


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


def test_seq_is_global_and_monotonic(store: EventStore) -> None:
    a = store.append(UserMessageAdded(turn=1, text="a b"), session_id="s1", workspace_id="w")
    b = store.append(UserMessageAdded(turn=1, text="c"), session_id="s2", workspace_id="w")
    assert b.seq == a.seq + 1
    assert [e.seq for e in store.read(after=a.seq)] == [b.seq]
    assert [e.seq for e in store.read(session_id="s1")] == [a.seq]


def test_events_are_append_only(store: EventStore) -> None:
    e = store.append(UserMessageAdded(turn=1, text="x"), session_id="s", workspace_id="w")
    db = store.db  # type: ignore[attr-defined]  # each backend's database, raw on purpose
    with pytest.raises(AppendOnlyViolation):
        db.execute("UPDATE events SET payload = '{}' WHERE seq = ?", (e.seq,))
    with pytest.raises(AppendOnlyViolation):
        db.execute("DELETE FROM events WHERE seq = ?", (e.seq,))
    assert store.read()[0].payload == UserMessageAdded(turn=1, text="x")


def test_token_count_stored_at_append(store: EventStore) -> None:
    e = store.append(
        UserMessageAdded(turn=1, text="one two three"), session_id="s", workspace_id="w"
    )
    assert e.tokens == 3
    started = store.append(
        SessionStarted(name="n", workspace_path="/", profile="p"), session_id="s", workspace_id="w"
    )
    assert started.tokens is None
    assert store.token_counts([e.seq, started.seq], WordCounter()) == {e.seq: 3}


def test_missing_counts_for_another_tokenizer_are_computed_once(store: EventStore) -> None:
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


def test_latest_and_count_filter_by_payload_field(store: EventStore) -> None:
    for turn in (1, 2, 2):
        store.append(UserMessageAdded(turn=turn, text=f"t{turn}"), session_id="s", workspace_id="w")
    other = store.append(UserMessageAdded(turn=2, text="x"), session_id="s2", workspace_id="w")
    newest = store.latest("s", "UserMessageAdded", where=("turn", 2))
    assert newest is not None and newest.seq == other.seq - 1
    first = store.latest("s", "UserMessageAdded", where=("turn", 2), before=newest.seq)
    assert first is not None and first.seq == newest.seq - 1
    assert store.latest("s", "UserMessageAdded", where=("turn", 9)) is None
    assert store.latest("s", "ContextAssembled") is None
    assert store.count(session_id="s", types=["UserMessageAdded"], where_json=("turn", 2)) == 2
    assert store.count(session_id="s", types=["UserMessageAdded", "SessionStarted"]) == 3


def test_history_page_reads_newest_first_with_cached_counts(store: EventStore) -> None:
    seqs = [
        store.append(UserMessageAdded(turn=i, text="a b c"), session_id="s", workspace_id="w").seq
        for i in range(5)
    ]
    page = store.history_page(
        "s", ["UserMessageAdded"], counter="words", chat_counter="chat", before=seqs[4], limit=2
    )
    assert [r.seq for r in page] == [seqs[3], seqs[2]]
    assert [r.tokens for r in page] == [3, 3] and page[0].chat_tokens is None
    assert UserMessageAdded.model_validate_json(page[0].payload_json).turn == 3


def test_read_until_and_types(store: EventStore) -> None:
    a = store.append(UserMessageAdded(turn=1, text="a"), session_id="s", workspace_id="w")
    store.append(
        SessionStarted(name="n", workspace_path="/", profile="p"), session_id="s", workspace_id="w"
    )
    b = store.append(UserMessageAdded(turn=2, text="b"), session_id="s", workspace_id="w")
    assert [e.seq for e in store.read(until=a.seq)] == [a.seq]
    assert [e.seq for e in store.read(types=["UserMessageAdded"], after=a.seq)] == [b.seq]
    assert store.get(b.seq) is not None and store.get(b.seq + 100) is None


def test_postgres_append_outside_a_transaction_is_one_statement(pg_url: str) -> None:
    """Lock, insert, token count and commit in one round trip (the lock is never held while the
    client pauses); inside ``atomic()`` the append joins the transaction as before."""
    from kairox.store.postgres.db import PgDatabase
    from kairox.store.postgres.events import PostgresEventStore
    from kairox.store.postgres.schema import MIGRATIONS

    db = PgDatabase.open(pg_url, MIGRATIONS)
    store = PostgresEventStore(db, FakeClock(), WordCounter())
    statements: list[str] = []
    real_read = db.read

    def counting_read():  # type: ignore[no-untyped-def]
        cm = real_read()
        conn = cm.__enter__()
        real_execute = conn.execute

        def execute(sql: str, params: object = ()) -> object:
            statements.append(sql)
            return real_execute(sql, params)  # type: ignore[arg-type]

        conn.execute = execute  # type: ignore[method-assign,assignment]
        return _Wrapped(cm, conn)

    def no_transaction() -> None:
        raise AssertionError("a lone append opened a transaction")

    db.read = counting_read  # type: ignore[method-assign]
    db.atomic = no_transaction  # type: ignore[method-assign,assignment]
    published: list[object] = []
    store.hub.committed = published.append  # type: ignore[method-assign]
    event = store.append(UserMessageAdded(turn=1, text="a b c"), session_id="s", workspace_id="w")
    assert len(statements) == 1
    assert [getattr(e, "seq", None) for e in published] == [event.seq]  # once committed
    db.read, db.atomic = real_read, PgDatabase.atomic.__get__(db)  # type: ignore[method-assign]
    assert store.token_counts([event.seq], WordCounter()) == {event.seq: 3}
    with pytest.raises(RuntimeError), db.atomic():
        store.append(UserMessageAdded(turn=2, text="gone"), session_id="s", workspace_id="w")
        raise RuntimeError("roll back")
    assert [e.seq for e in store.read()] == [event.seq]
    db.close()


class _Wrapped:
    def __init__(self, cm: object, conn: object) -> None:
        self.cm, self.conn = cm, conn

    def __enter__(self) -> object:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.cm.__exit__(*exc)  # type: ignore[attr-defined]
