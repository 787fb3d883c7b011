"""The Postgres connection: a psycopg 3 pool, thread-bound transactions, and named migrations.

``atomic()`` mirrors the SQLite ``Database``: one transaction per thread, a savepoint when nested,
so an event append joins the memory change that caused it. Connections in ``atomic()``/``read()``
speak the shared ``?``-placeholder SQL of ``kairox.store.sql`` (``PgConnection`` translates).
Migrations are the same mechanism as SQLite's: each named script runs once, in its own
transaction, under an advisory lock so processes starting together do not race.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import psycopg
from psycopg.rows import dict_row
from psycopg.sql import Composed
from psycopg_pool import ConnectionPool

from kairox.core.errors import AppendOnlyViolation, StoreError
from kairox.store.migration import Migration
from kairox.store.postgres.vectors import VectorParam, VectorParamDumper

# Advisory lock classes (the first key of the two-key form), one per purpose.
LOCK_APPEND = 1
LOCK_MEMORY_KEY = 2
LOCK_LEASE = 3
LOCK_MIGRATE = 4
LOCK_VECTOR_INDEX = 5

POOL_MAX = 8
CONNECT_TIMEOUT_S = 10.0
# Per-connection settings: an HNSW walk keeps scanning past filtered rows until it has the rows
# asked for. How many candidates it keeps (``hnsw.ef_search``) depends on the graph's size and is
# set per walk (``PgDatabase.use_setting``; ``store.postgres.chunk_index.ef_search_for``).
SESSION_SETUP = "SET hnsw.iterative_scan = relaxed_order"

_PLACEHOLDER = re.compile(r"\?")


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def to_pg(sql: str) -> str:
    """``?`` placeholders (the shared SQL) to psycopg's ``%s``; literal ``%`` escaped."""
    return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))


class PgConnection:
    """A pooled connection that runs the shared ``?`` SQL; ``raw`` is the psycopg connection."""

    def __init__(self, raw: psycopg.Connection[dict[str, Any]], url: str) -> None:
        self.raw = raw
        self._url = url

    def execute(
        self, sql: str | Composed, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> psycopg.Cursor[dict[str, Any]]:
        """Run the shared ``?`` SQL, or a composed statement (``psycopg.sql``, ``%s`` params)."""
        try:
            return self.raw.execute(to_pg(sql) if isinstance(sql, str) else sql, params)
        except psycopg.Error as exc:
            _reraise(exc, self._url)

    def query_binary(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """The rows of ``sql`` in Postgres's binary format (a pgvector value as its bytes)."""
        try:
            with self.raw.cursor(binary=True) as cur:
                return cur.execute(to_pg(sql), params).fetchall()
        except psycopg.Error as exc:
            _reraise(exc, self._url)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """One statement for many parameter rows (psycopg pipelines them)."""
        try:
            with self.raw.cursor() as cur:
                cur.executemany(to_pg(sql), rows)
        except psycopg.Error as exc:
            _reraise(exc, self._url)


class PgDatabase:
    """A connection pool on one Postgres database; blocking calls belong off the event loop."""

    def __init__(self, url: str, pool: ConnectionPool[psycopg.Connection[dict[str, Any]]]) -> None:
        self.url = url
        self.pool = pool
        self._local = threading.local()
        # Each pooled connection's session settings made by ``use_setting`` (name -> value).
        self._settings: weakref.WeakKeyDictionary[psycopg.Connection[Any], dict[str, str]] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def open(
        cls, url: str, migrations: Sequence[Migration], *, max_size: int = POOL_MAX
    ) -> PgDatabase:
        """Connect, migrate and pool. A bad URL or an unreachable server is one clear error."""
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                migrate(conn, migrations)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(
                f"cannot use the Postgres store at {redact(url)}: {first}; "
                "check [store] url / $KAIROX_STORE_URL and that the server is running"
            ) from exc
        pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=_configure,
            open=False,
            name="kairox",
        )
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        return cls(url, pool)

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def atomic(self) -> Iterator[PgConnection]:
        """A transaction on this thread's connection, or a savepoint when nested.

        Callbacks registered with ``after_commit`` run once the outermost transaction has
        committed; a rollback discards those of its scope."""
        current: PgConnection | None = getattr(self._local, "conn", None)
        pending: list[Callable[[], None]] = self._pending()
        if current is not None:
            mark = len(pending)
            try:
                with current.raw.transaction():
                    yield current
            except BaseException:
                del pending[mark:]
                raise
            return
        with self.pool.connection() as raw:
            conn = PgConnection(raw, self.url)
            self._local.conn = conn
            try:
                with raw.transaction():
                    yield conn
            except psycopg.Error as exc:
                pending.clear()
                _reraise(exc, self.url)
            except BaseException:
                pending.clear()
                raise
            finally:
                self._local.conn = None
        callbacks = list(pending)
        pending.clear()
        for callback in callbacks:
            callback()

    def in_transaction(self) -> bool:
        """Whether this thread has a transaction open (inside ``atomic()``)."""
        return getattr(self._local, "conn", None) is not None

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the enclosing transaction commits (never if it rolls back)."""
        if getattr(self._local, "conn", None) is None:
            raise StoreError("after_commit needs an open transaction (inside atomic())")
        self._pending().append(callback)

    def _pending(self) -> list[Callable[[], None]]:
        pending: list[Callable[[], None]] | None = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = []
        return pending

    @contextmanager
    def read(self) -> Iterator[PgConnection]:
        """This thread's transaction if one is open, else a pooled connection (autocommit)."""
        current: PgConnection | None = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        with self.pool.connection() as raw:
            yield PgConnection(raw, self.url)

    def use_setting(self, conn: PgConnection, name: str, value: str) -> None:
        """Have ``conn``'s next statements run with the server setting ``name`` = ``value``.

        Outside a transaction the session keeps it, and a connection that has it already is not
        asked again (no round trip while the value holds). Inside ``atomic()`` it is set for that
        transaction only each time (a rollback would undo a session-wide one unseen)."""
        if self.in_transaction():
            conn.execute("SELECT set_config(?, ?, true)", (name, value))
            return
        made = self._settings.setdefault(conn.raw, {})
        if made.get(name) != value:
            conn.execute("SELECT set_config(?, ?, false)", (name, value))
            made[name] = value

    def query(self, sql: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
        with self.read() as conn:
            return conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[object] = ()) -> dict[str, Any] | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def execute(self, sql: str, params: Sequence[object] = ()) -> psycopg.Cursor[dict[str, Any]]:
        """Run one write statement (its own transaction unless inside ``atomic()``)."""
        with self.atomic() as conn:
            return conn.execute(sql, params)

    def applied_migrations(self) -> list[str]:
        return [r["name"] for r in self.query("SELECT name FROM _migrations ORDER BY ord")]


def _configure(conn: psycopg.Connection[Any]) -> None:
    conn.execute(SESSION_SETUP)
    conn.adapters.register_dumper(VectorParam, VectorParamDumper)


def migrate(conn: psycopg.Connection[Any], migrations: Sequence[Migration]) -> None:
    """Apply each named migration once, in its own transaction, one process at a time."""
    names = [m.name for m in migrations]
    if len(set(names)) != len(names):
        raise StoreError("duplicate migration names: " + ", ".join(names))
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_MIGRATE,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY,"
            " ord BIGSERIAL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
    for migration in migrations:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_MIGRATE,))
            done = conn.execute(
                "SELECT 1 FROM _migrations WHERE name = %s", (migration.name,)
            ).fetchone()
            if done:
                continue
            conn.execute(migration.sql.encode())  # several statements: the simple protocol
            conn.execute("INSERT INTO _migrations(name) VALUES (%s)", (migration.name,))


def _reraise(exc: psycopg.Error, url: str) -> NoReturn:
    error = translate(exc, url)
    if error is exc:
        raise exc
    raise error from exc


def translate(exc: psycopg.Error, url: str) -> Exception:
    """A database error as a ``KairoxError``; integrity errors stay (callers may expect them)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "append-only" in text:
        return AppendOnlyViolation(text)
    if isinstance(exc, psycopg.errors.IntegrityError):
        return exc
    return StoreError(f"database error in {redact(url)}: {text}")
